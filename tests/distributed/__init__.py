"""amber with Dask, Zarr and the engines that only unpickle (amber.Packed)."""
