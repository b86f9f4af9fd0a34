"""Ductor's Python SDK: a client of the HTTP API and nothing more.

Three parts, as in the Go SDK (docs/sdk.md): definitions as values
(:class:`Definition`, the step builders), a :class:`Client` for every API
operation, and :class:`Worker` for your own task handlers. Standard
library only.
"""

from .client import DEFAULT_URL, Client
from .definition import (
    Choice,
    Definition,
    Duration,
    Edge,
    Limits,
    Outcome,
    Retry,
    Step,
    StepType,
    choose,
    go_duration,
    on,
    otherwise,
    then,
    when,
)
from .errors import APIError, DuctorError, TransportError, is_status
from .models import (
    Approval,
    Case,
    Compiled,
    DefinitionInfo,
    Delivery,
    DefinitionPage,
    Node,
    Run,
    RunError,
    RunPage,
    Secret,
    SecretPage,
    Started,
    Subscription,
    Transition,
    Upgrade,
    UsageReport,
    Version,
    VersionInfo,
    Waiting,
    Webhook,
    WebhookDelivery,
    Whoami,
)
from .steps import (
    ApprovalWith,
    CheckpointWith,
    DigestWith,
    EventMember,
    EventSetWith,
    EventWith,
    GatherWith,
    HTTPWith,
    HumanLoopWith,
    ScatterWith,
    SignalWith,
    SubworkflowWith,
    TaskWith,
    Template,
    WaitWith,
    approval_step,
    checkpoint_step,
    condition_step,
    digest_step,
    event_set_step,
    event_step,
    gather_step,
    http_step,
    human_loop_step,
    new_step,
    scatter_step,
    signal_step,
    subworkflow_step,
    task_step,
    transform_step,
    wait_step,
)
from .task import DEADLINE, LOST, SHUTDOWN, Task, TaskContext, TaskFailure, permanent
from .subscriptions import Subscriptions
from .triggers import Triggers
from .worker import MAX_OUTPUT_BYTES, Handler, Worker

__version__ = "0.1.0"

__all__ = [name for name in dir() if not name.startswith("_")]
