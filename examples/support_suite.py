"""Example suite: scenario tests for the bundled demo support agent.

The suite is defined once, in ``scenarist.demo`` (``scenarist demo`` runs the same
one); read it there. Run this file with ``python examples/support_suite.py``, or let the
CLI discover the module-level ``suite`` below: ``scenarist run examples/support_suite.py``.
It works offline. One scenario fails on purpose (the agent never states the fee of an
international transfer) so you can see how a failure reads.
"""

from __future__ import annotations

from scenarist.demo import DELIBERATE_FAILURE, build_demo_suite

suite = build_demo_suite()


def main() -> int:
    result = suite.run_sync(parallel=True, max_concurrency=4)
    result.print_report(group_by="topic")
    print(
        f"\nOne failure above is deliberate ({DELIBERATE_FAILURE}). "
        "Copy src/scenarist/demo.py, change a check, and run it with `scenarist run`."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
