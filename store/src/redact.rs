//! Connection URLs without their passwords, for every error and log line
//! that would quote one (docs/configuration.md, its opening): a `DATABASE_URL`
//! the driver cannot parse is quoted whole in its error, and a start-up
//! error is printed where a log collector keeps it.

use sea_orm::{DbErr, RuntimeErr};

/// What stands for a password.
const MASK: &str = "***";

/// The password of `url` (`scheme://user:password@host…`), read without
/// parsing the rest, which may be what is malformed.
fn password(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    // The authority ends at the first `/` after the last `@` (a password
    // may itself hold a `/`), or at the end.
    let at = rest.rfind('@')?;
    let userinfo = &rest[..at];
    let colon = userinfo.find(':')?;
    Some(&userinfo[colon + 1..]).filter(|p| !p.is_empty())
}

/// `url` with its password, if any, replaced by `***`.
pub fn url(url: &str) -> String {
    scrub(url, url)
}

/// `text` with the password of `url` replaced by `***` wherever the URL
/// is quoted, and wherever the password appears alone when it is long
/// enough not to be mistaken for other words (6 characters or more).
pub fn scrub(text: &str, url: &str) -> String {
    let Some(secret) = password(url) else {
        return text.to_owned();
    };
    let quoted = text.replace(&format!(":{secret}@"), &format!(":{MASK}@"));
    if secret.chars().count() >= 6 {
        quoted.replace(secret, MASK)
    } else {
        quoted
    }
}

/// `err` with no trace of `url`'s password: the same kind of error, its
/// text scrubbed ([`scrub`]) when it quoted it.
pub fn db_error(err: DbErr, url: &str) -> DbErr {
    if password(url).is_none() {
        return err;
    }
    match err {
        DbErr::Conn(RuntimeErr::Internal(text)) => {
            DbErr::Conn(RuntimeErr::Internal(scrub(&text, url)))
        }
        other => {
            let text = other.to_string();
            let scrubbed = scrub(&text, url);
            if scrubbed == text {
                other
            } else {
                DbErr::Custom(scrubbed)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked_also_in_malformed_urls() {
        assert_eq!(
            url("postgres://probe:S3cr3t@127.0.0.1:notaport/db"),
            "postgres://probe:***@127.0.0.1:notaport/db"
        );
        assert_eq!(url("postgress://u:p%40ss/w@db/x"), "postgress://u:***@db/x");
        assert_eq!(url("postgres://probe@db/x"), "postgres://probe@db/x");
        assert_eq!(url("sqlite://matchplane.db"), "sqlite://matchplane.db");
        assert_eq!(url("not a url"), "not a url");
        assert_eq!(url("redis://:pw@r:6379"), "redis://:***@r:6379");
        // A short password is masked in the URL, not in every other word.
        assert_eq!(
            scrub(
                "host pg unknown: postgres://pg:pg@h/x",
                "postgres://pg:pg@h/x"
            ),
            "host pg unknown: postgres://pg:***@h/x"
        );
        assert_eq!(
            scrub("auth failed for S3cr3tPW", "postgres://u:S3cr3tPW@h/x"),
            "auth failed for ***"
        );
    }
}
