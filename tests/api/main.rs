//! The black-box API suite: every case runs on the embedded store and on DynamoDB + SQS.

mod accounts_ops;
mod accreditation;
mod ats;
mod ats_hours;
mod clients;
mod costs;
mod custody;
mod documents;
mod escrow;
mod fixtures;
mod incumbent_clients;
mod kyc;
mod kyc_review;
mod links;
mod lists;
mod offering_documents;
mod offerings;
mod parties_accounts;
mod parties_ops;
mod payments;
mod platform;
mod probes;
mod trade_documents;
mod trades;
mod uploads;
mod webhooks;
