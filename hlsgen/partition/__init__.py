"""Whole models on host + accelerator: colour each node by where it runs, cut the model into stages, build the
accelerator segments, and run the whole graph (hlsgen.partition.whole)."""
