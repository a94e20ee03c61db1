"""The installation builder and the demo generator, shared by the tests, the demo and the benchmarks."""
