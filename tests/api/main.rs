//! The black-box API suite: every case runs on the embedded store and on DynamoDB + SQS.

mod accounts_ops;
mod costs;
mod fixtures;
mod kyc;
mod links;
mod lists;
mod parties_accounts;
mod parties_ops;
mod platform;
mod webhooks;
