//! The database of one test: made fresh on the test server (or as an SQLite
//! file) and dropped when its guard is, pass or fail (a failed assertion
//! unwinds through it). One fixture for every crate's tests, instead of a
//! copy per test suite.

use super::{database_url, database_url_named};
use sea_orm::{ConnectionTrait, Database, DatabaseConnection};
use std::path::PathBuf;

/// A database owned by one test: an empty PostgreSQL database on the test
/// server ([`TestDatabase::create`]) or an SQLite file
/// ([`TestDatabase::sqlite`]), dropped (`WITH (FORCE)`) or removed when
/// this is dropped. Nothing is migrated: a test runs the migrations it
/// needs on [`TestDatabase::url`].
#[derive(Debug)]
pub struct TestDatabase {
    url: String,
    name: String,
    /// The administrative URL the PostgreSQL database was created through.
    admin: Option<String>,
    /// The SQLite file.
    file: Option<PathBuf>,
}

/// `prefix` followed by a fresh lowercase ULID: a name no other test takes.
fn fresh_name(prefix: &str) -> String {
    format!("{prefix}{}", ulid::Ulid::new().to_string().to_lowercase())
}

/// `name` as a PostgreSQL identifier: quoted, so that any name (one with a
/// hyphen, or upper case) is taken as written.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl TestDatabase {
    /// Creates an empty PostgreSQL database named `prefix` and a fresh ULID
    /// on the test server ([`database_url`]).
    ///
    /// # Panics
    /// When the server is unset, out of reach, or refuses the database.
    pub async fn create(prefix: &str) -> Self {
        Self::create_named(&database_url(), &fresh_name(prefix)).await
    }

    /// Creates the empty PostgreSQL database `name` (exactly) through the
    /// administrative URL `admin`.
    ///
    /// # Panics
    /// When the server is out of reach, or refuses the database (it exists).
    pub async fn create_named(admin: &str, name: &str) -> Self {
        let conn = Database::connect(admin)
            .await
            .unwrap_or_else(|err| panic!("connect to the test PostgreSQL server: {err}"));
        conn.execute_unprepared(&format!("CREATE DATABASE {}", quoted(name)))
            .await
            .unwrap_or_else(|err| panic!("create the test database {name}: {err}"));
        conn.close().await.ok();
        Self {
            url: database_url_named(admin, name),
            name: name.to_owned(),
            admin: Some(admin.to_owned()),
            file: None,
        }
    }

    /// An SQLite database in the temporary directory, named `prefix` and a
    /// fresh ULID (`.db`), made at its first connection
    /// (`?mode=rwc`); the file and its `-shm` and `-wal` go with the guard.
    pub fn sqlite(prefix: &str) -> Self {
        let name = fresh_name(prefix);
        let path = std::env::temp_dir().join(format!("{name}.db"));
        Self {
            url: format!("sqlite://{}?mode=rwc", path.display()),
            name,
            admin: None,
            file: Some(path),
        }
    }

    /// A fresh migrated database, PostgreSQL on the test server when
    /// `postgres`, else an SQLite file, with a connection to it: what a
    /// store test that runs on both starts from.
    ///
    /// # Panics
    /// When the database cannot be made, reached or migrated.
    pub async fn migrated(postgres: bool) -> (DatabaseConnection, Self) {
        let database = if postgres {
            Self::create("mp_t_").await
        } else {
            Self::sqlite("mp_t_")
        };
        let conn = database.connect().await;
        matchplane_migrations::migrate(&conn)
            .await
            .unwrap_or_else(|err| panic!("migrate the test database {}: {err}", database.name));
        (conn, database)
    }

    /// The database's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name (for an SQLite file, its name without `.db`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Connects to the database.
    ///
    /// # Panics
    /// When it cannot be reached.
    pub async fn connect(&self) -> DatabaseConnection {
        Database::connect(&self.url)
            .await
            .unwrap_or_else(|err| panic!("connect to the test database {}: {err}", self.name))
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Some(admin) = self.admin.take() {
            let sql = format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                quoted(&self.name)
            );
            // A runtime of its own: the test's may be unwinding, or gone.
            let _ = std::thread::spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                rt.block_on(async {
                    if let Ok(conn) = Database::connect(&admin).await {
                        let _ = conn.execute_unprepared(&sql).await;
                        conn.close().await.ok();
                    }
                });
            })
            .join();
        }
        if let Some(path) = self.file.take() {
            for suffix in ["", "-shm", "-wal"] {
                let mut name = path.clone().into_os_string();
                name.push(suffix);
                let _ = std::fs::remove_file(name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn a_name_is_quoted_as_an_identifier() {
        assert_eq!(quoted("mp_e2e-parties_1"), "\"mp_e2e-parties_1\"");
        assert_eq!(quoted("a\"b"), "\"a\"\"b\"");
    }
}
