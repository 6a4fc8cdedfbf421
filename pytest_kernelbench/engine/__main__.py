"""`python -m pytest_kernelbench.engine IN OUT`: a judge process (judges.py), talking over the
two pipe descriptors it was given."""

import sys

from pytest_kernelbench.engine.judges import main

main(int(sys.argv[1]), int(sys.argv[2]))
