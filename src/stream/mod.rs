//! The stream pipeline: [`lines`] cuts bytes into lines, [`message`] types
//! each line, [`transcript`] folds the messages into what renderers need.

pub mod lines;
pub mod message;
pub mod transcript;
