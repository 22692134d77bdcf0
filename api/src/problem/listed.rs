//! How many field errors one answer lists (docs/errors.md).

use matchplane_matchmaker::{Code, FieldError};

/// Field errors one answer lists at most (docs/errors.md): a body with more
/// (a simulation's 200 000 bad rows) is answered with the first ones and a
/// last entry on `$` counting the rest, not with an answer many times the
/// size of the request.
pub const MAX_LISTED_ERRORS: usize = 1000;

/// `errors` as an answer lists them: the first [`MAX_LISTED_ERRORS`], then
/// one entry on `$` counting the rest (the API's answers and `matchplane
/// simulate`'s exit 2 alike).
pub fn listed(mut errors: Vec<FieldError>) -> Vec<FieldError> {
    let more = errors.len().saturating_sub(MAX_LISTED_ERRORS);
    if more > 0 {
        errors.truncate(MAX_LISTED_ERRORS);
        errors.push(FieldError::new(
            "$",
            Code::ValidationError,
            format!("{more} more errors are not listed: the first {MAX_LISTED_ERRORS} are"),
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past [`MAX_LISTED_ERRORS`] failures the answer lists the first ones
    /// and counts the rest, so its size stays bounded.
    #[test]
    fn a_long_error_list_is_cut_with_a_count_of_the_rest() {
        let errors: Vec<FieldError> = (0..MAX_LISTED_ERRORS + 250)
            .map(|i| FieldError::new(format!("rows[{i}]"), Code::ValidationError, "bad"))
            .collect();
        let err = super::super::ApiError::invalid(errors);
        assert_eq!(err.errors.len(), MAX_LISTED_ERRORS + 1);
        assert_eq!(err.errors[0].field, "rows[0]");
        let last = err.errors.last().unwrap();
        assert_eq!(last.field, "$");
        assert!(
            last.message.starts_with("250 more errors"),
            "{}",
            last.message
        );
        assert_eq!(
            err.detail,
            format!("{} fields are invalid; see errors", MAX_LISTED_ERRORS + 250)
        );
    }
}
