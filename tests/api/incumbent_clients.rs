//! What clients written for the incumbent send and read (CONTRACT, "What clients written for
//! the incumbent rely on"): each case sends exactly what such a client sends.

use api_tests::{both, TestApp};

use crate::fixtures::*;

both!(
    create_account_answers_the_one_record_in_an_array,
    |t: TestApp| async move {
        let r = t.put("createAccount", ACCOUNT).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let details = r.json["accountDetails"].as_array().expect("an array");
        assert_eq!(details.len(), 1, "{details:?}");
        let record = &details[0];
        for field in [
            "accountId",
            "kycStatus",
            "amlStatus",
            "accreditedStatus",
            "approvalStatus",
        ] {
            assert!(record.get(field).is_some(), "{field} in {record}");
        }
        // The client reads accountDetails[0].accountId and uses it.
        let id = r.json["accountDetails"][0]["accountId"].as_str().unwrap();
        let got = t.post("getAccount", &[("accountId", id)]).await;
        assert_eq!(got.code(), "101", "{:?}", got.json);
        assert_eq!(got.json["accountDetails"]["accountId"], id);
    }
);
