"""A Ductor worker: serves the handler py.greet on the queue py.

    DUCTOR_URL=http://127.0.0.1:8080 DUCTOR_API_KEY=dk_… python3 sdk-python/examples/worker.py

It runs until Ctrl-C or SIGTERM, then lets running tasks finish."""

import logging

from ductor import Client, TaskContext, Worker, permanent

logging.basicConfig(level=logging.INFO)
client = Client.from_env()  # DUCTOR_URL and DUCTOR_API_KEY
worker = Worker(client, queue="py", concurrency=4)


@worker.handle("py.greet")
def greet(ctx: TaskContext) -> dict:
    name = (ctx.input or {}).get("name")
    if not name:
        raise permanent("input.name is required")  # fails the step, not retried
    return {"greeting": f"hello, {name}", "attempt": ctx.attempt}


if __name__ == "__main__":
    print("worker ready", flush=True)
    worker.run()
