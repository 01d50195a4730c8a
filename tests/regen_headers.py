"""Write the generated kernel headers again after changing what they are generated from.

    python tests/regen_headers.py

kernels/plan.cuh comes from the plan interface (mcrisk/plan/record.py), kernels/constants.cuh
from the constants the kernels share with Python (mcrisk/core/definitions.py and
distributions.py); both are generated text (mcrisk.backends.cuda.plan_header() and
constants_header()), and tests/plan/test_record.py and tests/core/test_constants.py fail while a
file and its source differ.
"""
from pathlib import Path

from mcrisk.backends.cuda import CONSTANTS_HEADER, PLAN_HEADER, constants_header, plan_header

if __name__ == "__main__":
    kernels = Path(__file__).resolve().parents[1] / "kernels"
    for name, text in ((PLAN_HEADER, plan_header()), (CONSTANTS_HEADER, constants_header())):
        (kernels / name).write_text(text)
        print(f"wrote {kernels / name}")
