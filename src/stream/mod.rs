//! The stream pipeline: [`lines`] cuts bytes into lines, [`message`] types
//! each line (with the [`scan`] cursor), [`parallel`] parses a batch of
//! lines on two cores in order, [`transcript`] folds the messages into what
//! renderers need.

pub mod lines;
pub mod message;
pub mod parallel;
pub mod scan;
pub mod transcript;
