"""Paper reproductions, one module per paper: `dcnlab reproduce PAPER --scale small|paper`."""

PAPERS = ("ecn_sharp",)
