//! `tbb`: Intel oneTBB as a baseline runtime (feature `tbb`), through the C ABI of `shim/tbb.cpp`.

pub mod ffi;
