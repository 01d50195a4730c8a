"""Statuses of migrations in flight, as Python objects (the status file reader is tested on its
own): one migration's story on the reference and a busy day on reference-2048-full.

The reference's story follows a world the prior model drew (seed 7, scenario 304929, strategy
rolling-on-delivery), its days rounded to whole days and its racks' burn-ins set nearer their
typical days: S1 arrives 27 days late (day 102) and SU1 and SU2 are drained on its arrival (a
drained wave), row A1 is retrofitted first (108 to 134), then A2; S2 arrives on day 139 and
drains SU3 and SU4; N01 fails its first burn-in attempt and passes its second, N02 passes at
once; hall B is not energized by day 165, long past its plan (120), nor has S3 arrived. Every
fact is possible under the model for that strategy, in the order the model does things (an
attempt starts when the install or the previous repair ends, a retrofit when the crew is
free), and every event the status does not record happens after its date.
"""
from __future__ import annotations

from mcrisk.core.status import Attempt, RowStatus, Status, UnitStatus

STORY_STRATEGY = "rolling-on-delivery"
STORY_DAYS = (110.0, 150.0, 165.0)


def story(as_of: float, path: str = "status.toml") -> Status:
    """The reference's story told at day 110, 150 or 165 (STORY_DAYS)."""
    supply = (("S1", 102.0),) if as_of < 139.0 else (("S1", 102.0), ("S2", 139.0))
    old = [UnitStatus("SU1", drained=102.0, removed=108.0),
           UnitStatus("SU2", drained=102.0, removed=110.0 if as_of > 110.0 else None)]
    rows = [RowStatus("A1", retrofit_started=108.0,
                      retrofit_done=134.0 if as_of > 134.0 else None)]
    new = []
    if as_of >= 139.0:
        old += [UnitStatus("SU3", drained=139.0, removed=146.0),
                UnitStatus("SU4", drained=139.0, removed=147.0)]
        rows += [RowStatus("A2", retrofit_started=134.0)]
        first = (Attempt(140.0, 145.0, False, None if as_of < 151.0 else 151.0),)
        if as_of >= 157.0:
            first += (Attempt(151.0, 157.0, True),)
        new += [UnitStatus("N01", row="A1", install_start=134.0, install_end=140.0,
                           attempts=first, accepted=157.0 if as_of >= 157.0 else None),
                UnitStatus("N02", row="A1", install_start=134.0, install_end=137.0,
                           attempts=(Attempt(137.0, 142.0, True),), accepted=142.0)]
    return Status(path, "0" * 64, as_of, arrived=supply,
                  ready=(("xdr", 127.0),) if as_of >= 127.0 else (),
                  units=tuple(old + new), rows=tuple(rows))


def busy_day(path: str = "status.toml") -> Status:
    """reference-2048-full at day 220 under its hybrid strategies: every kind of fact at
    once (hall B energized after a slip, racks in every state of burn-in: passed, fix
    running, RMA running, attempt running, the next attempt not started; an accepted rack,
    one failed early and back, one failed early and in repair; a retrofit running and one
    done), and the risks that would leave facts with two unknowns settled."""
    a = Attempt
    return Status(
        path, "0" * 64, 220.0,
        arrived=(("S1", 100.0), ("S2", 135.0), ("S3", 168.0)),
        energized=(("B", 150.0),), ready=(("xdr", 130.0),),
        risks=(("utility-slip", None), ("allocation-cut", None)),
        units=(
            UnitStatus("SU3", drained=100.0, removed=107.0),
            UnitStatus("SU4", drained=100.0, removed=106.0),
            UnitStatus("SU5", drained=135.0, removed=141.0),
            UnitStatus("SU6", drained=135.0, removed=143.0),
            UnitStatus("N01", row="B1", install_start=150.0, install_end=154.0,
                       attempts=(a(154.0, 159.0, True),), accepted=159.0),
            UnitStatus("N02", row="B1", install_start=150.0, install_end=153.0,
                       attempts=(a(153.0, 158.0, False, 162.0), a(162.0, 167.0, True)),
                       accepted=167.0, failed_out=190.0, failed_back=196.0),
            UnitStatus("N03", row="B1", install_start=151.0, install_end=155.0,
                       attempts=(a(155.0, 160.0, False, 163.0), a(163.0, 168.0, False, 170.0),
                                 a(170.0, 175.0, False))),
            UnitStatus("N04", row="B1", install_start=151.0, install_end=154.0,
                       attempts=(a(154.0, 159.0, False, 163.0), a(163.0, 169.0, False, 175.0),
                                 a(175.0, 180.0, True)), accepted=180.0, failed_out=215.0),
            UnitStatus("N05", row="B1", install_start=214.0),
            UnitStatus("N06", row="B1", install_start=216.0, install_end=219.0),
            UnitStatus("N07", row="B1", install_start=205.0, install_end=209.0,
                       attempts=(a(209.0, 214.0, False),)),
            UnitStatus("N08", row="B1", install_start=212.0, install_end=215.0,
                       attempts=(a(215.0),)),
        ),
        rows=(RowStatus("A3", retrofit_started=200.0),
              RowStatus("A4", retrofit_started=110.0, retrofit_done=150.0)))
