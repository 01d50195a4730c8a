"""Write kernels/plan.cuh again from the plan interface (mcrisk/plan/record.py) after changing it.

    python tests/regen_plan_header.py

The header is generated text (mcrisk.backends.cuda.plan_header()); tests/test_plan_interface.py
fails while the file and the table differ.
"""
from pathlib import Path

from mcrisk.backends.cuda import PLAN_HEADER, plan_header

if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "kernels" / PLAN_HEADER
    target.write_text(plan_header())
    print(f"wrote {target}")
