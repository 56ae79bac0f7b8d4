//! `openmp`: LLVM's OpenMP runtime (libomp) as a baseline runtime (feature `openmp`), through the
//! C ABI of `shim/openmp.cpp`.

pub mod ffi;
