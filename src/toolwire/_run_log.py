"""The loop's log records: one per model answer and one per tool call, each with the run's id
(and the call's) in `extra`, so a handler can tie a run's records together."""

from __future__ import annotations

import logging

from ._run_result import TraceEntry
from .models.base import Completion

__all__ = ["log_answer", "log_call"]

logger = logging.getLogger("toolwire")


def log_answer(run_id: str, iteration: int, provider: str, completion: Completion) -> None:
    """Log a model answer at DEBUG."""
    usage = completion.usage
    logger.debug(
        "run %s: model request %d answered by %s:%s (%s; %d input, %d output tokens)",
        run_id,
        iteration,
        provider,
        completion.model,
        completion.finish_reason,
        usage.input_tokens,
        usage.output_tokens,
        extra={"toolwire_run_id": run_id},
    )


def log_call(run_id: str, trace: TraceEntry) -> None:
    """Log a tool call: DEBUG when it succeeded, INFO when it failed."""
    level = logging.INFO if trace.is_error else logging.DEBUG
    if logger.isEnabledFor(level):
        outcome = f"failed: {trace.result[:200]}" if trace.is_error else "done"
        logger.log(
            level,
            "run %s: tool call %s (%s) %s in %.3fs",
            run_id,
            trace.call_id,
            trace.name,
            outcome,
            trace.duration,
            extra={"toolwire_run_id": run_id, "toolwire_call_id": trace.call_id},
        )
