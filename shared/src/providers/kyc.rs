//! The KYC/AML provider port and its deterministic sandbox implementation.
//!
//! Sandbox rules (also in `docs/investors-kyc.md`):
//! - A subject matches the watch list when its last name (an individual) or its entity
//!   name contains the word `Watchlist` or `Sanctioned` (any case). A match scores
//!   [`MATCH_SCORE`] on OFAC; no match scores 0.
//! - The identity of every existing subject is located (`result.match`), with or without an
//!   SSN; without an SSN the report carries the qualifier `SSN Not Provided`.
//! - The questions are always the five of [`QUESTIONS`], in that order; the correct answer
//!   to each is its first listed choice ([`Question::correct`]).
//! - The answers pass with [`PASS_MARK`] correct out of five; they are matched to the
//!   questions by `type`, case-insensitively, trimmed.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Correct answers needed to pass (part 1, Limits).
pub const PASS_MARK: usize = 3;
/// The OFAC score of a watch-list match.
pub const MATCH_SCORE: u32 = 95;
/// Words that put a name on the sandbox watch list.
pub const WATCH_WORDS: &[&str] = &["watchlist", "sanctioned"];

/// Who is checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Subject {
    /// The party or entity ID.
    pub id: String,
    /// An entity (`E…`) rather than an individual.
    pub entity: bool,
    pub first_name: String,
    pub last_name: String,
    pub entity_name: String,
    pub ssn: String,
    pub ein: String,
    pub dob: String,
    pub city: String,
    pub state: String,
    pub zip: String,
    pub country: String,
}

/// One follow-up question as the provider asks it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Question {
    #[serde(rename = "type")]
    pub qtype: String,
    pub prompt: String,
    pub answer: Vec<String>,
}

impl Question {
    /// The sandbox's correct answer: the first choice.
    pub fn correct(&self) -> &str {
        self.answer.first().map(String::as_str).unwrap_or("")
    }
}

/// The sandbox's five questions: (type, prompt, choices; the first is correct).
pub const QUESTIONS: &[(&str, &str, &[&str])] = &[
    (
        "city.of.residence",
        "Which of the following cities have you lived in?",
        &["Springfield", "Riverton", "Lakeside", "Fairview", "None of the above"],
    ),
    (
        "county.of.residence",
        "In which of the following counties have you lived?",
        &["Greene", "Harlan", "Marion", "Polk", "None of the above"],
    ),
    (
        "purchased.property.from",
        "From whom did you purchase property?",
        &[
            "Jordan Smith",
            "Casey Brown",
            "Riley Jones",
            "Morgan Davis",
            "None of the above",
        ],
    ),
    (
        "year.of.manufacture",
        "What year was your vehicle manufactured?",
        &["2015", "2011", "2018", "2009", "None of the above"],
    ),
    (
        "street.name",
        "On which street have you lived?",
        &["Oak", "Maple", "Cedar", "Pine", "None of the above"],
    ),
];

/// An identity (KYC) report.
#[derive(Clone, Debug, PartialEq)]
pub struct KycReport {
    /// The provider's report ID (`id-number`), also the `idNumber` the answers quote.
    pub id_number: String,
    /// The identity was located.
    pub located: bool,
    pub qualifiers: Vec<String>,
    /// Follow-up questions (empty for a basic check).
    pub questions: Vec<Question>,
    pub aml: AmlReport,
}

impl KycReport {
    /// `kyc.response` as the incumbent shapes it: `id-number`, `summary-result`, `results`
    /// {key, message}, `qualifiers.qualifier` and, with questions, `questions.question`.
    pub fn response(&self) -> Value {
        let (key, message) = if self.located {
            ("result.match", "ID Located")
        } else {
            ("result.no.match", "ID Not Located")
        };
        let qualifiers: Vec<Value> = self
            .qualifiers
            .iter()
            .map(|m| json!({"key": qualifier_key(m), "message": m}))
            .collect();
        let mut r = json!({
            "id-number": self.id_number,
            "summary-result": {"key": if self.located { "id.success" } else { "id.failure" },
                               "message": if self.located { "PASS" } else { "FAIL" }},
            "results": {"key": key, "message": message},
            "qualifiers": {"qualifier": qualifiers},
        });
        if !self.questions.is_empty() {
            r["questions"] = json!({"question": self.questions});
        }
        r
    }
}

fn qualifier_key(message: &str) -> String {
    format!("resultcode.{}", message.to_lowercase().replace(' ', "."))
}

/// A watch-list (AML) report.
#[derive(Clone, Debug, PartialEq)]
pub struct AmlReport {
    pub id_number: String,
    pub matched: bool,
    /// The list matched (`OFAC SDN`), empty without a match.
    pub list: String,
    /// The OFAC score: 0 without a match.
    pub score: u32,
}

impl AmlReport {
    /// The raw watch-list result (`partyDetails.response` of performAml).
    pub fn response(&self) -> Value {
        let (key, message) = if self.matched {
            ("result.match", "Watch List Match")
        } else {
            ("result.no.match", "No Watch List Match")
        };
        json!({
            "id-number": self.id_number,
            "results": {"key": key, "message": message},
            "amlList": self.list,
            "amlScore": self.score,
        })
    }

    /// `AML SCORE` of an entity: `{ OFAC: score }` on a match, else `0`.
    pub fn score_value(&self) -> Value {
        if self.matched {
            json!({"OFAC": self.score})
        } else {
            json!(0)
        }
    }
}

/// How the provider judged the answers to the questions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass {
        message: String,
    },
    Fail {
        message: String,
    },
    /// Neither pass nor fail (the question set is unknown to the provider).
    Undetermined {
        message: String,
    },
}

/// A KYC/AML provider. `reference` is a number the caller allocated for this check,
/// unique per client; a provider may use it as its report ID or give its own.
#[async_trait]
pub trait KycProvider: Send + Sync {
    /// An identity check with (`questions`) or without follow-up questions, plus the
    /// watch-list screening that goes with it.
    async fn kyc(&self, subject: &Subject, questions: bool, reference: u64) -> KycReport;
    /// A watch-list screening alone.
    async fn aml(&self, subject: &Subject, reference: u64) -> AmlReport;
    /// Judges `answers` (`type`, answer) against the questions asked.
    async fn verify(&self, asked: &[Question], answers: &[(String, String)]) -> Verdict;
}

/// The deterministic sandbox provider (rules in the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct SandboxKyc;

impl SandboxKyc {
    /// Whether the subject's last name (or entity name) is on the sandbox watch list.
    pub fn on_watch_list(subject: &Subject) -> bool {
        let name = if subject.entity {
            &subject.entity_name
        } else {
            &subject.last_name
        };
        let name = name.to_lowercase();
        WATCH_WORDS.iter().any(|w| name.contains(w))
    }

    /// The sandbox's five questions.
    pub fn questions() -> Vec<Question> {
        QUESTIONS
            .iter()
            .map(|(t, p, a)| Question {
                qtype: (*t).to_owned(),
                prompt: (*p).to_owned(),
                answer: a.iter().map(|s| (*s).to_owned()).collect(),
            })
            .collect()
    }
}

#[async_trait]
impl KycProvider for SandboxKyc {
    async fn kyc(&self, subject: &Subject, questions: bool, reference: u64) -> KycReport {
        let mut qualifiers = Vec::new();
        let id_missing = if subject.entity {
            subject.ein.trim().is_empty()
        } else {
            subject.ssn.trim().is_empty()
        };
        if id_missing {
            qualifiers.push(
                if subject.entity {
                    "EIN Not Provided"
                } else {
                    "SSN Not Provided"
                }
                .to_owned(),
            );
        }
        let aml = self.aml(subject, reference).await;
        if aml.matched {
            qualifiers.push("Watch List Match".to_owned());
        }
        KycReport {
            id_number: reference.to_string(),
            located: true,
            qualifiers,
            questions: if questions && !subject.entity && !aml.matched {
                Self::questions()
            } else {
                Vec::new()
            },
            aml,
        }
    }

    async fn aml(&self, subject: &Subject, reference: u64) -> AmlReport {
        let matched = Self::on_watch_list(subject);
        AmlReport {
            id_number: reference.to_string(),
            matched,
            list: if matched { "OFAC SDN".to_owned() } else { String::new() },
            score: if matched { MATCH_SCORE } else { 0 },
        }
    }

    async fn verify(&self, asked: &[Question], answers: &[(String, String)]) -> Verdict {
        if asked.is_empty() {
            return Verdict::Undetermined {
                message: "No questions were asked for this idNumber".to_owned(),
            };
        }
        let norm = |s: &str| s.trim().to_lowercase();
        let right = asked
            .iter()
            .filter(|q| {
                answers
                    .iter()
                    .find(|(t, _)| norm(t) == norm(&q.qtype))
                    .is_some_and(|(_, a)| norm(a) == norm(q.correct()))
            })
            .count();
        let message = format!("{right} of {} answers correct", asked.len());
        if right >= PASS_MARK {
            Verdict::Pass { message }
        } else {
            Verdict::Fail {
                message: format!("Verification failed: {message}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(right: usize) -> Vec<(String, String)> {
        QUESTIONS
            .iter()
            .enumerate()
            .map(|(i, (t, _, a))| ((*t).to_owned(), if i < right { a[0] } else { a[1] }.to_owned()))
            .collect()
    }

    #[tokio::test]
    async fn three_of_five_pass_and_two_fail() {
        let asked = SandboxKyc::questions();
        assert!(matches!(
            SandboxKyc.verify(&asked, &answers(3)).await,
            Verdict::Pass { .. }
        ));
        assert!(matches!(
            SandboxKyc.verify(&asked, &answers(2)).await,
            Verdict::Fail { .. }
        ));
        assert!(matches!(
            SandboxKyc.verify(&[], &answers(5)).await,
            Verdict::Undetermined { .. }
        ));
    }

    #[tokio::test]
    async fn watch_list_words_match_in_any_case() {
        let s = |last: &str| Subject {
            last_name: last.into(),
            ..Subject::default()
        };
        assert!(SandboxKyc.aml(&s("Mc-WATCHLIST"), 1).await.matched);
        assert!(SandboxKyc.aml(&s("Sanctioned"), 1).await.matched);
        assert!(!SandboxKyc.aml(&s("Lee"), 1).await.matched);
        let r = SandboxKyc.kyc(&s("Lee"), true, 7).await;
        assert_eq!((r.id_number.as_str(), r.questions.len()), ("7", 5));
        assert_eq!(r.qualifiers, vec!["SSN Not Provided".to_owned()]);
    }
}
