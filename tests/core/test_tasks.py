"""core.tasks.Background: tasks in order behind the caller, at most `depth` waiting, the
first failure raised (at the next put or at finish), nothing running on after cancel."""
from __future__ import annotations

import threading
import time

import pytest

from mcrisk.core.tasks import Background


def test_tasks_run_in_order_and_finish_waits_for_all():
    done = []
    writer = Background(depth=2)
    for k in range(6):
        writer.put(lambda k=k: (time.sleep(0.01), done.append(k)))
    writer.finish()
    assert done == list(range(6))


def test_put_waits_when_depth_tasks_are_waiting():
    release, started, running = threading.Event(), threading.Event(), []
    writer = Background(depth=2)

    def blocked():
        started.set()
        release.wait(5)

    writer.put(blocked)
    started.wait(5)
    writer.put(lambda: running.append(1))         # waiting: 2 of 2 (the running one too)
    third = threading.Thread(target=writer.put, args=(lambda: running.append(2),))
    third.start()
    third.join(0.2)
    assert third.is_alive()                        # held back: no room
    release.set()
    third.join(5)
    assert not third.is_alive()
    writer.finish()
    assert running == [1, 2]


def test_the_first_failure_is_raised_at_the_next_put_or_at_finish():
    writer = Background(depth=4)
    writer.put(lambda: (_ for _ in ()).throw(OSError("disk full")))
    time.sleep(0.1)
    with pytest.raises(OSError, match="disk full"):
        writer.put(lambda: None)
    late = Background(depth=4)
    late.put(lambda: None)
    late.put(lambda: (_ for _ in ()).throw(ValueError("second")))
    with pytest.raises(ValueError, match="second"):
        late.finish()


def test_cancel_drops_waiting_tasks_and_waits_for_the_running_one():
    release, started, ran = threading.Event(), threading.Event(), []
    writer = Background(depth=3)

    def running():
        started.set()
        release.wait(5)
        ran.append("running")

    writer.put(running)
    started.wait(5)
    writer.put(lambda: ran.append("waiting"))
    threading.Timer(0.1, release.set).start()
    writer.cancel()
    assert ran == ["running"]                      # waited for, and the other never ran
    time.sleep(0.1)
    assert ran == ["running"]
