"""Differential fuzzing of the whole compiler: random valid models (numpy = C-sim = RTL, float = onnxruntime)
and mutated inputs (every bad file ends in its documented exit code and one line)."""
