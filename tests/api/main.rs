//! The black-box API suite: every case runs on the embedded store and on DynamoDB + SQS.

mod costs;
mod fixtures;
mod links;
mod lists;
mod parties_accounts;
mod platform;
mod webhooks;
