//! The CI job a command runs in, read from the variables each CI system
//! sets for its jobs: GitHub Actions, GitLab CI, Buildkite, CircleCI and
//! Jenkins. Reports say what was tested with it (and where to look).

use serde::{Deserialize, Serialize};

/// The CI job: which system, which repository and commit, and its page.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CiJob {
    /// `github-actions`, `gitlab-ci`, `buildkite`, `circleci` or `jenkins`.
    pub provider: String,
    /// The repository (`owner/name`, or its URL where the system gives only that).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// The commit tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The branch or ref tested.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "ref")]
    pub git_ref: Option<String>,
    /// The job's (or pipeline's) page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_url: Option<String>,
}

impl CiJob {
    /// The job as OpenTelemetry resource attributes: the CICD and VCS
    /// names of the semantic conventions' registry (`vcs.provider.name`
    /// where the CI system is its code host's), and the CI system itself
    /// under analyst's own namespace, as the registry names none.
    pub fn resource_attributes(&self) -> Vec<(String, String)> {
        let mut attributes = vec![("analyst.ci.provider".to_string(), self.provider.clone())];
        let code_host = match self.provider.as_str() {
            "github-actions" => Some("github".to_string()),
            "gitlab-ci" => Some("gitlab".to_string()),
            _ => None,
        };
        for (key, value) in [
            ("vcs.provider.name", &code_host),
            ("vcs.repository.name", &self.repository),
            ("vcs.ref.head.revision", &self.commit),
            ("vcs.ref.head.name", &self.git_ref),
            ("cicd.pipeline.run.url.full", &self.run_url),
        ] {
            if let Some(value) = value {
                attributes.push((key.to_string(), value.clone()));
            }
        }
        attributes
    }
}

impl CiJob {
    /// The job the variables describe (`var`: a variable's value, `None`
    /// when unset or empty); `None` outside CI. (The settings read the
    /// environment and hand it over.)
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Option<CiJob> {
        let job = |provider: &str, repository, commit, git_ref, run_url| CiJob {
            provider: provider.to_string(),
            repository,
            commit,
            git_ref,
            run_url,
        };
        if var("GITHUB_ACTIONS").as_deref() == Some("true") {
            let run_url = match (var("GITHUB_SERVER_URL"), var("GITHUB_REPOSITORY"), var("GITHUB_RUN_ID")) {
                (Some(server), Some(repository), Some(id)) => Some(format!("{server}/{repository}/actions/runs/{id}")),
                _ => None,
            };
            return Some(job(
                "github-actions",
                var("GITHUB_REPOSITORY"),
                var("GITHUB_SHA"),
                var("GITHUB_REF"),
                run_url,
            ));
        }
        if var("GITLAB_CI").is_some() {
            return Some(job(
                "gitlab-ci",
                var("CI_PROJECT_PATH"),
                var("CI_COMMIT_SHA"),
                var("CI_COMMIT_REF_NAME"),
                var("CI_JOB_URL").or_else(|| var("CI_PIPELINE_URL")),
            ));
        }
        if var("BUILDKITE").as_deref() == Some("true") {
            return Some(job(
                "buildkite",
                var("BUILDKITE_REPO"),
                var("BUILDKITE_COMMIT"),
                var("BUILDKITE_BRANCH"),
                var("BUILDKITE_BUILD_URL"),
            ));
        }
        if var("CIRCLECI").as_deref() == Some("true") {
            let repository = match (var("CIRCLE_PROJECT_USERNAME"), var("CIRCLE_PROJECT_REPONAME")) {
                (Some(owner), Some(name)) => Some(format!("{owner}/{name}")),
                _ => var("CIRCLE_REPOSITORY_URL"),
            };
            return Some(job(
                "circleci",
                repository,
                var("CIRCLE_SHA1"),
                var("CIRCLE_BRANCH").or_else(|| var("CIRCLE_TAG")),
                var("CIRCLE_BUILD_URL"),
            ));
        }
        if var("JENKINS_URL").is_some() {
            return Some(job(
                "jenkins",
                var("GIT_URL"),
                var("GIT_COMMIT"),
                var("BRANCH_NAME").or_else(|| var("GIT_BRANCH")),
                var("BUILD_URL"),
            ));
        }
        None
    }
}

/// The branch and commit of the git checkout that holds `path`, read
/// from its `.git` (a folder, or a worktree's file naming one): `HEAD`
/// names a branch, whose commit is in its ref file or `packed-refs`, or
/// is a detached commit. `(None, None)` outside a checkout; nothing is
/// run (no `git` needed).
pub fn checkout_of(path: &std::path::Path) -> (Option<String>, Option<String>) {
    let Ok(absolute) = std::path::absolute(path) else {
        return (None, None);
    };
    let Some(dot_git) = absolute
        .ancestors()
        .map(|folder| folder.join(".git"))
        .find(|git| git.exists())
    else {
        return (None, None);
    };
    let git = match std::fs::read_to_string(&dot_git) {
        // A worktree: `gitdir: PATH`.
        Ok(text) => match text.trim().strip_prefix("gitdir:") {
            Some(dir) => dot_git.parent().unwrap_or(&dot_git).join(dir.trim()),
            None => return (None, None),
        },
        Err(_) => dot_git,
    };
    let read = |name: &str| std::fs::read_to_string(git.join(name)).ok();
    let Some(head) = read("HEAD") else {
        return (None, None);
    };
    let head = head.trim();
    let Some(reference) = head.strip_prefix("ref:").map(str::trim) else {
        return (None, Some(head.to_string()).filter(|commit| !commit.is_empty()));
    };
    let branch = reference.strip_prefix("refs/heads/").unwrap_or(reference).to_string();
    // A worktree keeps its HEAD apart and shares the refs of its common folder.
    let common = read("commondir").map(|dir| git.join(dir.trim()));
    let commit = [Some(git.clone()), common].into_iter().flatten().find_map(|dir| {
        let loose = std::fs::read_to_string(dir.join(reference)).ok();
        let packed = || {
            std::fs::read_to_string(dir.join("packed-refs"))
                .ok()
                .and_then(|packed| {
                    packed.lines().find_map(|line| {
                        let (commit, name) = line.split_once(' ')?;
                        (name == reference).then(|| commit.to_string())
                    })
                })
        };
        loose.map(|commit| commit.trim().to_string()).or_else(packed)
    });
    (Some(branch), commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(vars: &[(&str, &str)]) -> Option<CiJob> {
        CiJob::from_vars(|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        })
    }

    #[test]
    fn each_system_is_read_from_its_own_variables() {
        let github = job(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_REPOSITORY", "acme/agents"),
            ("GITHUB_SHA", "abc123"),
            ("GITHUB_REF", "refs/pull/7/merge"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_RUN_ID", "42"),
        ])
        .unwrap();
        assert_eq!(
            github.run_url.as_deref(),
            Some("https://github.com/acme/agents/actions/runs/42")
        );
        assert_eq!(
            serde_json::to_value(&github).unwrap(),
            serde_json::json!({"provider": "github-actions", "repository": "acme/agents", "commit": "abc123",
                "ref": "refs/pull/7/merge", "runUrl": "https://github.com/acme/agents/actions/runs/42"})
        );
        let gitlab = job(&[
            ("GITLAB_CI", "true"),
            ("CI_PROJECT_PATH", "acme/agents"),
            ("CI_PIPELINE_URL", "https://gl/p/1"),
        ])
        .unwrap();
        assert_eq!(
            (gitlab.provider.as_str(), gitlab.run_url.as_deref()),
            ("gitlab-ci", Some("https://gl/p/1"))
        );
        let circle = job(&[
            ("CIRCLECI", "true"),
            ("CIRCLE_PROJECT_USERNAME", "acme"),
            ("CIRCLE_PROJECT_REPONAME", "agents"),
        ])
        .unwrap();
        assert_eq!(circle.repository.as_deref(), Some("acme/agents"));
        assert_eq!(job(&[("BUILDKITE", "true")]).unwrap().provider, "buildkite");
        assert_eq!(job(&[("JENKINS_URL", "https://ci/")]).unwrap().provider, "jenkins");
        assert_eq!(job(&[("CI", "true")]), None);
    }

    #[test]
    fn a_checkouts_branch_and_commit_are_read_from_its_git_folder() {
        let repo = tempfile::tempdir().unwrap();
        let git = repo.path().join(".git");
        std::fs::create_dir_all(git.join("refs/heads")).unwrap();
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(git.join("refs/heads/main"), "0123abc\n").unwrap();
        let suite = repo.path().join("evals/smoke.toml");
        assert_eq!(checkout_of(&suite), (Some("main".into()), Some("0123abc".into())));
        std::fs::remove_file(git.join("refs/heads/main")).unwrap();
        std::fs::write(git.join("packed-refs"), "# pack-refs\nfeed42 refs/heads/main\n").unwrap();
        assert_eq!(checkout_of(&suite), (Some("main".into()), Some("feed42".into())));
        std::fs::write(git.join("HEAD"), "beef99\n").unwrap();
        assert_eq!(checkout_of(&suite), (None, Some("beef99".into())), "detached");
    }
}
