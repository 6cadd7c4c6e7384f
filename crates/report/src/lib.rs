//! yace report
