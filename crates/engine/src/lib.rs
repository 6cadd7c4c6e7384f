//! yace engine
