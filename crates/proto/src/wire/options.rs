//! DCCP wire format (being written).
