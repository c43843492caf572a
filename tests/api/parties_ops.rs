//! Party and entity operations beyond the first slice.
