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
}
