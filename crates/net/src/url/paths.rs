//! The paths of a bonded sender (issue 19): `paths=` and `bind=`.
//!
//! A sending URL's own address is its first path. `paths=SPEC[,SPEC…]`
//! adds more, each `HOST:PORT` (`[V6]:PORT`) where that path's packets
//! go, optionally followed by `@LOCAL`: the local address its socket binds
//! (`192.168.1.5`, `192.168.1.5:5000`) or, after `dev:`, the network
//! interface it is bound to (`dev:wwan0`, Linux `SO_BINDTODEVICE`, which
//! needs CAP_NET_RAW). `bind=LOCAL` does the same for the first path.
//! Several paths may lead to the same receiver address through different
//! interfaces, or to different addresses of one receiver (two emulated
//! links on one machine, each forwarding to the receiver).

use std::fmt;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use fairstream_proto::session::MAX_PATHS;

/// Where a path's socket binds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LocalBind {
    /// A local address (port 0: any free port).
    Address(SocketAddr),
    /// A network interface, by name (`SO_BINDTODEVICE`).
    Device(String),
}

impl fmt::Display for LocalBind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocalBind::Address(address) => write!(f, "{address}"),
            LocalBind::Device(name) => write!(f, "dev:{name}"),
        }
    }
}

/// One more path of a sending URL: where it sends, and where it binds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathSpec {
    /// `HOST:PORT` as given.
    pub remote: String,
    /// Where its socket binds, if the URL says.
    pub local: Option<LocalBind>,
}

impl PathSpec {
    /// The address it sends to.
    pub fn resolve(&self) -> Result<SocketAddr, String> {
        let address = self
            .remote
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve `{}`: {e}", self.remote))?
            .next()
            .ok_or_else(|| format!("`{}` resolves to no address", self.remote))?;
        if address.port() == 0 {
            return Err(format!("`{}` names port 0", self.remote));
        }
        Ok(address)
    }
}

/// `shared=`: which paths share a bottleneck.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SharedPaths {
    /// `all`: every path.
    All,
    /// Groups of path indices (0 is the URL's own address).
    Groups(Vec<Vec<usize>>),
}

impl fmt::Display for SharedPaths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SharedPaths::All => f.write_str("all"),
            SharedPaths::Groups(groups) => {
                let text: Vec<String> = groups
                    .iter()
                    .map(|g| g.iter().map(usize::to_string).collect::<Vec<_>>().join("+"))
                    .collect();
                f.write_str(&text.join(","))
            }
        }
    }
}

impl SharedPaths {
    /// Each of `paths` paths' group, or why the groups do not fit them.
    pub fn by_path(&self, paths: usize) -> Result<Vec<Option<usize>>, String> {
        if paths < 2 {
            return Err("shared needs paths=: one path shares with no other".into());
        }
        match self {
            SharedPaths::All => Ok(vec![Some(0); paths]),
            SharedPaths::Groups(groups) => {
                let mut by_path = vec![None; paths];
                for (group, members) in groups.iter().enumerate() {
                    for &path in members {
                        match by_path.get_mut(path) {
                            None => {
                                return Err(format!(
                                    "path {path} does not exist (there are {paths}, from 0)"
                                ))
                            }
                            Some(Some(_)) => return Err(format!("path {path} is in two groups")),
                            Some(slot) => *slot = Some(group),
                        }
                    }
                }
                Ok(by_path)
            }
        }
    }
}

/// Parses `shared=`'s value: `all`, or groups like `0+1,2+3`.
pub(super) fn parse_shared(value: &str) -> Result<SharedPaths, String> {
    if value == "all" {
        return Ok(SharedPaths::All);
    }
    let expected = "expected all, or groups of path indices such as 0+1 or 0+1,2+3";
    let mut groups = Vec::new();
    for group in value.split(',') {
        let members = group
            .split('+')
            .map(|index| {
                index
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| expected.to_owned())
            })
            .collect::<Result<Vec<usize>, String>>()?;
        if members.len() < 2 {
            return Err(format!("group `{group}` has one path: {expected}"));
        }
        groups.push(members);
    }
    Ok(SharedPaths::Groups(groups))
}

/// Parses `bind=`'s value.
pub(super) fn parse_local(value: &str) -> Result<LocalBind, String> {
    if let Some(name) = value.strip_prefix("dev:") {
        // IFNAMSIZ is 16 with the terminating zero.
        if name.is_empty()
            || name.len() > 15
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:@".contains(&b))
        {
            return Err(format!(
                "`{name}` is not an interface name (1 to 15 letters, digits, -, _, .)"
            ));
        }
        return Ok(LocalBind::Device(name.to_owned()));
    }
    if let Ok(address) = value.parse::<SocketAddr>() {
        return Ok(LocalBind::Address(address));
    }
    if let Ok(ip) = value.trim_matches(['[', ']']).parse::<IpAddr>() {
        return Ok(LocalBind::Address(SocketAddr::new(ip, 0)));
    }
    Err(
        "expected a local address (192.168.1.5, 192.168.1.5:5000, [fe80::1]:5000) \
         or dev:INTERFACE"
            .into(),
    )
}

/// Parses `paths=`'s value.
pub(super) fn parse_paths(value: &str) -> Result<Vec<PathSpec>, String> {
    let mut paths = Vec::new();
    for spec in value.split(',') {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err("an empty path (expected HOST:PORT[@LOCAL], comma-separated)".into());
        }
        let (remote, local) = match spec.split_once('@') {
            Some((remote, local)) => (remote, Some(parse_local(local)?)),
            None => (spec, None),
        };
        let port = remote.rsplit_once(':').map(|(_, p)| p).unwrap_or("");
        if !port.parse::<u16>().is_ok_and(|p| p > 0) || remote.starts_with(':') {
            return Err(format!(
                "path `{spec}` needs HOST:PORT with a port in 1..=65535"
            ));
        }
        paths.push(PathSpec {
            remote: remote.to_owned(),
            local,
        });
    }
    if paths.len() + 1 > MAX_PATHS {
        return Err(format!(
            "{} paths with the URL's own; at most {MAX_PATHS}",
            paths.len() + 1
        ));
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_binds_parse_and_errors_name_the_problem() {
        let paths =
            parse_paths("127.0.0.1:9002,10.0.0.1:9000@dev:wwan0,[::1]:7@[::1]:5000").unwrap();
        assert_eq!(paths.len(), 3);
        assert_eq!(paths[0].local, None);
        assert_eq!(paths[1].local, Some(LocalBind::Device("wwan0".into())));
        assert_eq!(
            paths[2].local,
            Some(LocalBind::Address("[::1]:5000".parse().unwrap()))
        );
        assert_eq!(
            paths[0].resolve().unwrap(),
            "127.0.0.1:9002".parse().unwrap()
        );
        assert_eq!(
            parse_local("192.168.1.5").unwrap(),
            LocalBind::Address("192.168.1.5:0".parse().unwrap())
        );
        for (bad, says) in [
            ("", "empty path"),
            ("127.0.0.1", "HOST:PORT"),
            ("127.0.0.1:0", "HOST:PORT"),
            (":9000", "HOST:PORT"),
            ("127.0.0.1:9000@nowhere", "local address"),
            ("127.0.0.1:9000@dev:", "interface name"),
            ("127.0.0.1:9000@dev:a-very-long-interface", "interface name"),
            ("a:1,b:2,c:3,d:4,e:5,f:6,g:7,h:8", "at most 8"),
        ] {
            let error = parse_paths(bad).unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }
}
