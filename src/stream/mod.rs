//! The stream pipeline: [`lines`] cuts bytes into lines, [`message`] types
//! each line (with the [`scan`] cursor), [`transcript`] folds the messages into what renderers need.

pub mod lines;
pub mod message;
pub mod scan;
pub mod transcript;
