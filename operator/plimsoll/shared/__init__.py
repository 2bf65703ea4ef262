"""Small pure helpers shared by the core and the images (histograms, distributions, the
load split).

The generator and the mock may import this package and `plimsoll.api`, nothing
else from the core; an import-linter contract holds that line.
"""
