"""One module per kernel family: each turns an integer-graph node into a `Kernel` (its template's
context and its constants). Python decides every number and name here; the templates only print."""
