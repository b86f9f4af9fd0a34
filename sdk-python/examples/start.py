"""Publishes a definition whose task runs on the queue py, starts a run
and waits for it: the other half of sdk-python/examples/worker.py.

    DUCTOR_URL=http://127.0.0.1:8080 DUCTOR_API_KEY=dk_… python3 sdk-python/examples/start.py ada"""

import sys

from ductor import Client, Definition, TaskWith, task_step

client = Client.from_env()
client.publish(Definition(
    key="py-greet",
    steps=[task_step("greet", TaskWith("py.greet", queue="py", input_expr='{"name": input.name}'))],
))
name = sys.argv[1] if len(sys.argv) > 1 else "ada"
started = client.start_run("py-greet", {"name": name}, idempotency_key=f"greet-{name}")
run = client.wait_run(started.id, timeout=60)
print(run.status, run.output)
sys.exit(0 if run.status == "succeeded" else 1)
