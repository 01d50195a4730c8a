"""mcrisk.core.stops: a stop raises once wherever it lands, and one that Python swallows (a
finalizer) or code drops is raised again, silently; stops held back are delivered after.
In this process, with the handlers set only inside each block (tests/app/test_stops.py
stops real processes)."""
from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from mcrisk.core.stops import Terminated, signals_held, stop_message, stop_status, stops_unwind


class _StoppedInAFinalizer:
    """An object whose finalizer receives a SIGTERM: the handler runs inside __del__."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(3):                  # the handler runs here, between bytecodes
            pass


def _busy(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.001)


def test_a_stop_a_finalizer_swallows_is_raised_again_outside_it_and_nothing_printed(
        monkeypatch):
    printed = []
    monkeypatch.setattr(sys, "unraisablehook", printed.append)     # Python's printer
    reached = []
    with pytest.raises(Terminated):
        with stops_unwind():
            _StoppedInAFinalizer()
            reached.append("after the finalizer")      # it was swallowed there...
            _busy(5)                                   # ...and raised again here
            reached.append("the end")
    assert reached == ["after the finalizer"] and printed == []


def test_a_stop_dropped_on_the_way_is_raised_by_settle():
    with stops_unwind() as stops, pytest.raises(Terminated):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            _busy(1)
        except BaseException:      # noqa: B036 -- code that drops every exception
            pass
        stops.settle()


def test_a_second_stop_while_the_first_unwinds_is_ignored():
    cleaned = []
    with stops_unwind() as stops, pytest.raises(KeyboardInterrupt):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            _busy(1)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)          # ignored: the cleanup completes
            _busy(0.05)
            cleaned.append(True)
    assert cleaned == [True] and stops.signum == signal.SIGINT


def test_a_stop_held_back_is_delivered_after_the_block():
    finished = []
    with stops_unwind(), pytest.raises(Terminated):
        with signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            _busy(0.05)
            finished.append(True)
    assert finished == [True]


def test_the_handlers_before_the_block_are_back_after_it():
    before = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)]
    hook = sys.unraisablehook
    with stops_unwind():
        assert signal.getsignal(signal.SIGTERM) not in before
    assert [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)] == before
    assert sys.unraisablehook is hook


def test_the_message_and_status_of_each_stop():
    assert stop_status(signal.SIGINT) == 130 and stop_status(signal.SIGTERM) == 143
    assert stop_message(signal.SIGTERM).startswith("mcrisk: stopped by SIGTERM; ")
    assert stop_message(signal.SIGINT).startswith("mcrisk: stopped by Ctrl-C (SIGINT); ")


def test_a_stop_the_process_ignores_stays_ignored():
    # a shell starts a script's background job with SIGINT ignored: Ctrl-C is the script's
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with stops_unwind():
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) != signal.SIG_DFL
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
