//! Suitability records (calculateSuitability, getSuitability, updateSuitability,
//! deleteSuitability): one per account, keyed by the account ID.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The stored suitability of an account: calculateSuitability's parameters (part 2 and the
/// observed extras) plus the score calculated from them and the dates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Suitability {
    #[serde(rename = "accountId")]
    pub id: String,
    #[serde(rename = "suitabilityScore")]
    pub score: String,
    pub risk_profile: String,
    pub investment_experience: String,
    pub priv_off_experience: String,
    pub pct_priv_securities: String,
    pub pct_illiquid_securities: String,
    pub pct_liquid_securities: String,
    pub pct_real_estate: String,
    pub time_horizon: String,
    pub education: String,
    pub financial_advisor: String,
    pub investment_objective: String,
    pub notes: String,
    pub additionalnotes: String,
    pub deleted: bool,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
}

crate::records::record!(Suitability, "SUITABILITY", id);

/// The parameters a suitability takes, by their names, in record order (the score is
/// calculated, the rest are sent).
pub const FIELDS: &[&str] = &[
    "riskProfile",
    "investmentExperience",
    "privOffExperience",
    "pctPrivSecurities",
    "pctIlliquidSecurities",
    "pctLiquidSecurities",
    "pctRealEstate",
    "timeHorizon",
    "education",
    "financialAdvisor",
    "investmentObjective",
    "notes",
    "additionalnotes",
];

impl Suitability {
    /// The suitability record of the responses (and webhooks): every stored field but the
    /// deleted flag.
    pub fn view(&self) -> Map<String, Value> {
        super::fields_without(self, &["deleted"])
    }

    /// The field named `name` (one of [`FIELDS`]).
    pub fn field_mut(&mut self, name: &str) -> Option<&mut String> {
        Some(match name {
            "riskProfile" => &mut self.risk_profile,
            "investmentExperience" => &mut self.investment_experience,
            "privOffExperience" => &mut self.priv_off_experience,
            "pctPrivSecurities" => &mut self.pct_priv_securities,
            "pctIlliquidSecurities" => &mut self.pct_illiquid_securities,
            "pctLiquidSecurities" => &mut self.pct_liquid_securities,
            "pctRealEstate" => &mut self.pct_real_estate,
            "timeHorizon" => &mut self.time_horizon,
            "education" => &mut self.education,
            "financialAdvisor" => &mut self.financial_advisor,
            "investmentObjective" => &mut self.investment_objective,
            "notes" => &mut self.notes,
            "additionalnotes" => &mut self.additionalnotes,
            _ => return None,
        })
    }

    /// `suitabilityScore`: the mean of the three scores that are set (`riskProfile`,
    /// `investmentExperience`, `privOffExperience`), rounded half up and kept within 1 to 5
    /// (part 2's scale); empty when none is set.
    pub fn calculate_score(&mut self) {
        let scores: Vec<Decimal> = [
            &self.risk_profile,
            &self.investment_experience,
            &self.priv_off_experience,
        ]
        .iter()
        .filter_map(|s| {
            let t = s.trim();
            t.parse::<Decimal>().or_else(|_| Decimal::from_scientific(t)).ok()
        })
        .collect();
        self.score = if scores.is_empty() {
            String::new()
        } else {
            let sum = scores.iter().try_fold(Decimal::ZERO, |acc, s| acc.checked_add(*s));
            let mean = sum.and_then(|s| s.checked_div(Decimal::from(scores.len())));
            let rounded = mean.map_or(Decimal::from(5), |m| {
                m.round_dp_with_strategy(0, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
            });
            rounded.clamp(Decimal::ONE, Decimal::from(5)).to_string()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(risk: &str, experience: &str, private: &str) -> String {
        let mut s = Suitability {
            risk_profile: risk.into(),
            investment_experience: experience.into(),
            priv_off_experience: private.into(),
            ..Suitability::default()
        };
        s.calculate_score();
        s.score
    }

    #[test]
    fn the_score_is_the_mean_rounded_half_up_within_one_to_five() {
        assert_eq!(score("1", "2", ""), "2", "1.5 rounds up");
        assert_eq!(score("1", "1", "2"), "1", "1.33 rounds down");
        assert_eq!(score("4", "5", "5"), "5");
        assert_eq!(score("9", "9", "9"), "5", "kept within the scale");
        assert_eq!(score("0", "", ""), "1");
        assert_eq!(score("2.5", "", ""), "3");
        assert_eq!(score("", " ", "x"), "");
    }
}
