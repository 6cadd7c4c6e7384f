//! yace stats
