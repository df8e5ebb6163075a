//! Unit tests of the RoCE connection and DCQCN.
