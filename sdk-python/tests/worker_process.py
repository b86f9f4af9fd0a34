"""A worker process the tests start, kill and cancel. It serves
test.block on DUCTOR_QUEUE and tells stdout what its handler sees:

    started TASK_ID ATTEMPT        the handler began
    stopped CAUSE                  its cancellation event was set
    ready                          it is polling

With DUCTOR_BLOCK=1 the handler waits until cancelled; else it answers
{"pid", "attempt"} at once."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ductor import Client, TaskContext, Worker  # noqa: E402

block = os.environ.get("DUCTOR_BLOCK") == "1"
worker = Worker(Client.from_env(), queue=os.environ["DUCTOR_QUEUE"],
                heartbeat_every=float(os.environ.get("DUCTOR_HEARTBEAT_EVERY") or 0) or None,
                drain_timeout=float(os.environ.get("DUCTOR_DRAIN_TIMEOUT") or 30), poll_wait=2.0)


@worker.handle("test.block")
def handle(ctx: TaskContext) -> dict:
    print("started", ctx.task.id, ctx.attempt, flush=True)
    if block:
        ctx.cancelled.wait(60)
        print("stopped", ctx.cause, flush=True)
        raise RuntimeError(f"stopped: {ctx.cause}")
    return {"pid": os.getpid(), "attempt": ctx.attempt}


print("ready", flush=True)
worker.run()
print("exited", flush=True)
