//! Startup authentication: SCRAM-SHA-256 against the users in meta, with
//! a short-lived credentials cache that also carries logins through a
//! short meta outage.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use common::Result;
use pgwire::api::auth::sasl::scram::ScramSecret;
use pgwire::api::auth::{AuthSource, LoginInfo, Password};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use shard_router::Router;

use super::response::to_pg_error;

pub(super) struct MetaAuth {
    pub(super) router: Arc<Router>,
}

impl std::fmt::Debug for MetaAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MetaAuth")
    }
}

#[async_trait]
impl AuthSource for MetaAuth {
    /// Only SCRAM is offered, and it asks [`Self::get_scram_secret`]:
    /// no password or salted password is stored to hand out.
    async fn get_password(&self, login: &LoginInfo) -> PgWireResult<Password> {
        Err(auth_failed(login.user().unwrap_or_default()))
    }

    /// The stored verifier (StoredKey, ServerKey): enough to check the
    /// client's proof, not to compute one.
    async fn get_scram_secret(&self, login: &LoginInfo) -> PgWireResult<(ScramSecret, Option<()>)> {
        let user = login.user().unwrap_or_default();
        let creds = cached_credentials(&self.router, user)
            .await
            .map_err(|e| to_pg_error(&e))?;
        match creds {
            Some(v) => Ok((
                ScramSecret::Verifier {
                    salt: v.salt,
                    iterations: v.iterations as usize,
                    stored_key: v.stored_key,
                    server_key: v.server_key,
                },
                None,
            )),
            None => Err(auth_failed(user)),
        }
    }
}

fn auth_failed(user: &str) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "FATAL".into(),
        "28P01".into(),
        format!("password authentication failed for user \"{user}\""),
    )))
}

type Credentials = Option<meta::ScramVerifier>;

/// Logins' SCRAM credentials by user, with when meta was last asked.
static CREDENTIALS: std::sync::LazyLock<
    parking_lot::Mutex<HashMap<String, (Credentials, std::time::Instant)>>,
> = std::sync::LazyLock::new(Default::default);

/// How long an answer of meta about a user (also "no such user") is
/// reused: a flood of login attempts costs meta one query per user and
/// interval, not one per attempt.
const CREDENTIALS_TTL: std::time::Duration = std::time::Duration::from_secs(5);

/// A user's credentials: from the cache while fresh, else from meta; when
/// meta cannot be reached, an entry up to `shard_router::META_GRACE` old
/// still serves, so logins keep working through a short meta outage.
/// Meta's answer is waited for `META_CHECK_TIMEOUT` at most: a stopped
/// meta primary answers nothing, and a login waiting on it would wait for
/// ever (seen: a client's login hung through a meta failover for good).
async fn cached_credentials(router: &Router, user: &str) -> Result<Credentials> {
    let cached = CREDENTIALS.lock().get(user).cloned();
    if let Some((c, at)) = &cached {
        if at.elapsed() < CREDENTIALS_TTL {
            return Ok(c.clone());
        }
    }
    let asked = tokio::time::timeout(
        shard_router::META_CHECK_TIMEOUT,
        router.meta.user_credentials(user),
    )
    .await
    .unwrap_or_else(|_| {
        Err(common::Error::meta(
            "meta did not answer within a second (it may be failing over)",
        ))
    });
    match asked {
        Ok(c) => {
            let mut m = CREDENTIALS.lock();
            if m.len() > 10_000 {
                m.clear();
            }
            m.insert(user.to_string(), (c.clone(), std::time::Instant::now()));
            Ok(c)
        }
        Err(e) => match cached {
            Some((c, at)) if at.elapsed() < shard_router::META_GRACE => Ok(c),
            _ => Err(e),
        },
    }
}
