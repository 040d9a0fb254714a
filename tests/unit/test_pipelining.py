"""Requests sent ahead of their replies: the same answers, in order, whatever happens to the child."""

from __future__ import annotations

import time

import pytest
from helpers import SOLUTION

from grader.child.session import Session
from grader.child.worker import WINDOW_BYTES, Worker, WorkerLost
from grader.exercise.cases import Case
from grader.grade import Options
from grader.judging.judge import Tolerance, judge_op
from grader.judging.plan import plan_op
from grader.submission.source import read_submission

# __add__ kills its own process when it meets a = 3
DIES_AT_THREE = SOLUTION.replace(
    "    def __add__(self, other):",
    "    def __add__(self, other):\n        if self.data == 3.0:\n            import os\n            os._exit(3)")


def add_case(a: float) -> Case:
    """``(a + b) * a`` with b = 0.5: an add node among fixed ones, its request a few hundred bytes."""
    return Case(exprs=((("leaf", "a"), ("leaf", "b"), ("add", 0, 1), ("mul", 2, 0)),),
                inputs=(("a", a), ("b", 0.5)))


@pytest.fixture
def opened(tmp_path):
    def open_session(source: str) -> Session:
        path = tmp_path / "work.py"
        path.write_text(source)
        session = Session(read_submission(path), Options(timeout=10.0).exercise())
        session.open()
        sessions.append(session)
        return session

    sessions: list[Session] = []
    yield open_session
    for session in sessions:
        session.close()


def test_replies_come_back_in_order_past_the_window(opened, mode, monkeypatch):
    session = opened(SOLUTION)
    writes = []
    write = Worker._write
    monkeypatch.setattr(Worker, "_write", lambda worker, data: writes.append(len(data)) or write(worker, data))
    cases = [add_case(0.25 * k + 0.5) for k in range(400)]
    plans = [plan_op(case, "add") for case in cases]
    # more than the window, and more than both pipes hold (64 KiB each on Linux): sent all at
    # once, the two processes would end up waiting on each other
    assert sum(len(str(plan.request)) for plan in plans) > max(8 * WINDOW_BYTES, 2 * 64 * 1024)
    replies = list(session.call_many([plan.request for plan in plans], time.monotonic() + 30))
    verdicts = [judge_op(case, reply, plan, Tolerance()) for case, reply, plan in zip(cases, replies, plans)]
    assert len(verdicts) == len(cases)
    assert all(v.passed("both") for v in verdicts)
    assert [v.expected_data for v in verdicts] == [(c.values["a"] + 0.5) * c.values["a"] for c in cases]
    # sent a half window at a time, not a request at a time: each write wakes the child
    assert max(writes) <= WINDOW_BYTES and len(writes) <= 2 * sum(writes) // WINDOW_BYTES + 1 < len(cases) // 10


def test_a_batch_left_unread_costs_the_next_call_nothing(opened, mode):
    session = opened(SOLUTION)
    cases = [add_case(0.5 * k + 1.0) for k in range(20)]
    replies = session.call_many([plan_op(case, "add").request for case in cases], time.monotonic() + 30)
    assert next(replies)["data"][-1] == pytest.approx(1.5)
    del replies  # the other 19 replies are still on their way
    last = add_case(7.0)
    reply = session.call(plan_op(last, "add").request, time.monotonic() + 30)
    assert judge_op(last, reply, plan_op(last, "add"), Tolerance()).passed("both")


def test_a_child_lost_mid_batch_loses_only_what_was_not_answered(opened, mode):
    session = opened(DIES_AT_THREE)
    cases = [add_case(a) for a in (1.0, 2.0, 3.0, 4.0)]
    answered = []
    with pytest.raises(WorkerLost) as lost:
        for reply in session.call_many([plan_op(case, "add").request for case in cases], time.monotonic() + 30):
            answered.append(reply)
    assert lost.value.reason == "crash"
    assert [reply["data"][-1] for reply in answered] == [1.5, 5.0]  # a = 1 and a = 2; a = 3 killed the child
    # the next call gets a fresh child
    reply = session.call(plan_op(cases[3], "add").request, time.monotonic() + 30)
    assert reply["data"][-1] == pytest.approx(18.0)
