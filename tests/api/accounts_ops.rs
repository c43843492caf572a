//! Account operations beyond the first slice: notes, archive status, suitability, reads and updates.
