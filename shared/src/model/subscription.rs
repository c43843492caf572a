//! Subscription templates of offerings: the e-signature templates an offering's investors
//! sign (addSubscriptionsforOffering attaches them, sendSubscriptionDocument sends the
//! offering's active ones).
//!
//! How they are stored: [`crate::records::subscription`].

use serde::{Deserialize, Serialize};

use crate::ids::IdKind;
use crate::model::Stamps;

/// The counter of `templateNameID`s.
pub const SUBSCRIPTION: IdKind = IdKind::numeric("subscription", 100_000);

/// A template attached to an offering.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OfferingTemplate {
    /// The service's numeric ID (`templateNameID`; `templateId` in getSubscriptionsforOffering).
    #[serde(rename = "templateId")]
    pub id: String,
    pub offering_id: String,
    /// The e-signature account's template ID: what an envelope sends.
    pub template_key: String,
    pub template_name: String,
    /// The template's `uri` at the provider.
    pub template_url: String,
    #[serde(flatten)]
    pub stamps: Stamps,
    pub deleted: bool,
}

impl OfferingTemplate {
    /// getSubscriptionsforOffering's element: `createdDate`, `offeringId`, `templateId`,
    /// `templateKey`, `templateName`, `templateUrl`.
    pub fn view(&self) -> TemplateView {
        TemplateView {
            created_date: self.stamps.created.clone(),
            offering_id: self.offering_id.clone(),
            template_id: self.id.clone(),
            template_key: self.template_key.clone(),
            template_name: self.template_name.clone(),
            template_url: self.template_url.clone(),
        }
    }

    /// The add/update answer's element and webhook: `offeringId`, `templateName`,
    /// `templateNameID` (a JSON number).
    pub fn summary(&self) -> TemplateSummary {
        TemplateSummary {
            offering_id: self.offering_id.clone(),
            template_name: self.template_name.clone(),
            template_name_id: self
                .id
                .parse::<u64>()
                .map_or_else(|_| self.id.clone().into(), serde_json::Value::from),
        }
    }
}

/// See [`OfferingTemplate::view`].
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateView {
    pub created_date: String,
    pub offering_id: String,
    pub template_id: String,
    pub template_key: String,
    pub template_name: String,
    pub template_url: String,
}

/// See [`OfferingTemplate::summary`].
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateSummary {
    pub offering_id: String,
    pub template_name: String,
    /// A number; the stored text only if it is not one.
    #[serde(rename = "templateNameID")]
    pub template_name_id: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_answers_the_id_as_a_number() {
        let t = OfferingTemplate {
            id: "100000".into(),
            ..OfferingTemplate::default()
        };
        assert_eq!(t.summary().template_name_id, 100000);
    }
}
