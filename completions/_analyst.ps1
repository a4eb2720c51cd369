
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'analyst' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'analyst'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'analyst' {
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, '--connect-timeout before the command')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, '--timeout before the command')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, '--idle-timeout before the command')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, '--retries before the command')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('ask', 'ask', [CompletionResultType]::ParameterValue, 'Ask the agent a question: the answer, CSV, a chart or JSON')
            [CompletionResult]::new('abort', 'abort', [CompletionResultType]::ParameterValue, 'Stop a running chat, as the identity that started it')
            [CompletionResult]::new('session', 'session', [CompletionResultType]::ParameterValue, 'Mint an embed session for signed embedding, or revoke some')
            [CompletionResult]::new('rows', 'rows', [CompletionResultType]::ParameterValue, 'Every row of a (truncated) SQL result, from the data query API')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Ask a suite of known questions: smoke checks and evals')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check the setup: what is set, from where, and what answers')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Show the resolved settings, or the config file''s path')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script, or the man page')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'The local record of past turns: list, show, export, usage')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version, its commit and its target')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'analyst;ask' {
            [CompletionResult]::new('--chat-id', '--chat-id', [CompletionResultType]::ParameterName, 'Continue this thread (its chat id, printed on stderr as ''chat: <id>'')')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'Continue the thread named NAME, or start it')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'What to write on stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'What to write on stdout')
            [CompletionResult]::new('--jq', '--jq', [CompletionResultType]::ParameterName, 'Filter the JSON output through a jq expression')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout, atomically')
            [CompletionResult]::new('--replay', '--replay', [CompletionResultType]::ParameterName, 'Read a saved stream (''-'' = stdin) instead of calling the service')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'Send an image with the question (repeatable; ''-'' reads one from stdin when the question is an argument): PNG, JPEG, GIF or WebP, at most 20 MiB')
            [CompletionResult]::new('--thread-ttl', '--thread-ttl', [CompletionResultType]::ParameterName, 'A thread whose last turn is older than this starts afresh')
            [CompletionResult]::new('--resume', '--resume', [CompletionResultType]::ParameterName, 'With --chat-id: resume that suspended turn (sends chatId and messageId; no question needed)')
            [CompletionResult]::new('--branch', '--branch', [CompletionResultType]::ParameterName, 'Run queries against this development branch (activeBranchName)')
            [CompletionResult]::new('--query', '--query', [CompletionResultType]::ParameterName, 'Which SQL result csv, vega and svg use: ''last'' (the last one that did not fail) or a 1-based index')
            [CompletionResult]::new('--tee', '--tee', [CompletionResultType]::ParameterName, 'Also save the raw stream, byte for byte, to FILE')
            [CompletionResult]::new('--vega-config', '--vega-config', [CompletionResultType]::ParameterName, 'For vega, svg, png and html: a Vega config merged into the chart''s (a JSON file, or a theme of vega-themes: dark, excel, fivethirtyeight, ggplot2, googlecharts, latimes, powerbi, quartz, urbaninstitute, vox, carbonwhite, carbong10, carbong90, carbong100)')
            [CompletionResult]::new('--scale', '--scale', [CompletionResultType]::ParameterName, 'For -o png: pixels per SVG pixel (1 to 8)')
            [CompletionResult]::new('--expect-answer', '--expect-answer', [CompletionResultType]::ParameterName, 'Exit 9 unless the final answer matches this regular expression')
            [CompletionResult]::new('--expect-sql', '--expect-sql', [CompletionResultType]::ParameterName, 'Exit 9 unless some SQL query of the agent matches this regular expression')
            [CompletionResult]::new('--expect-tool', '--expect-tool', [CompletionResultType]::ParameterName, 'Exit 9 unless the agent called this tool (repeatable; semantic*/cube* names are the same tool)')
            [CompletionResult]::new('--min-rows', '--min-rows', [CompletionResultType]::ParameterName, 'Exit 9 unless the selected SQL result (--query) has at least N rows (totalRows)')
            [CompletionResult]::new('--data-url', '--data-url', [CompletionResultType]::ParameterName, 'The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api')
            [CompletionResult]::new('--chat-url', '--chat-url', [CompletionResultType]::ParameterName, 'The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)')
            [CompletionResult]::new('--api-key-file', '--api-key-file', [CompletionResultType]::ParameterName, 'Read the API key from this file (''-'' = stdin) instead of ANALYST_API_KEY')
            [CompletionResult]::new('--cube-token-file', '--cube-token-file', [CompletionResultType]::ParameterName, 'Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file (''-'' = stdin) instead of ANALYST_CUBE_TOKEN')
            [CompletionResult]::new('--external-id', '--external-id', [CompletionResultType]::ParameterName, 'Id of an external user (lowercase, no spaces); created on first use')
            [CompletionResult]::new('--internal-id', '--internal-id', [CompletionResultType]::ParameterName, 'Username of an existing internal user (often an email), whose own permissions apply')
            [CompletionResult]::new('--email', '--email', [CompletionResultType]::ParameterName, 'The user''s email address')
            [CompletionResult]::new('--attr', '--attr', [CompletionResultType]::ParameterName, 'A user attribute for row-level security (repeatable; external users only)')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'A group the user belongs to (repeatable; external users only)')
            [CompletionResult]::new('--security-context', '--security-context', [CompletionResultType]::ParameterName, 'Security context for data queries: a JSON object, or @FILE (external users only)')
            [CompletionResult]::new('--ttl', '--ttl', [CompletionResultType]::ParameterName, 'Lifetime of an ephemeral external user (e.g. 12h, 7d)')
            [CompletionResult]::new('--timezone', '--timezone', [CompletionResultType]::ParameterName, 'The IANA time zone the agent''s queries run in (timezone), e.g. Europe/Berlin')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a connection to the service')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('--all-rows', '--all-rows', [CompletionResultType]::ParameterName, 'Fetch every row of a truncated result (csv, vega, json)')
            [CompletionResult]::new('--no-history', '--no-history', [CompletionResultType]::ParameterName, 'Record nothing of this turn in the history (as ANALYST_HISTORY=0)')
            [CompletionResult]::new('--default-branch', '--default-branch', [CompletionResultType]::ParameterName, 'Say that --branch names the default (main/production) branch')
            [CompletionResult]::new('--fail-on-tool-error', '--fail-on-tool-error', [CompletionResultType]::ParameterName, 'Exit 8 when a tool result carries an error')
            [CompletionResult]::new('--allow-partial', '--allow-partial', [CompletionResultType]::ParameterName, 'For csv, vega and json: a truncated result is a warning, not exit 10')
            [CompletionResult]::new('--expect-faithful', '--expect-faithful', [CompletionResultType]::ParameterName, 'Exit 9 when a figure of the answer is not in the rows')
            [CompletionResult]::new('--allow-questions', '--allow-questions', [CompletionResultType]::ParameterName, 'An agent that asks back: its question is the answer, exit 0 (else exit 12)')
            [CompletionResult]::new('--persistent', '--persistent', [CompletionResultType]::ParameterName, 'Make the external user persistent (isEphemeral: false)')
            [CompletionResult]::new('--no-authoring', '--no-authoring', [CompletionResultType]::ParameterName, 'The agent may not create or change saved reports, workbooks or dashboards')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;abort' {
            [CompletionResult]::new('--chat-id', '--chat-id', [CompletionResultType]::ParameterName, 'The chat to stop (printed by ask on stderr as ''chat: <id>'')')
            [CompletionResult]::new('--external-id', '--external-id', [CompletionResultType]::ParameterName, 'Id of an external user (lowercase, no spaces); created on first use')
            [CompletionResult]::new('--internal-id', '--internal-id', [CompletionResultType]::ParameterName, 'Username of an existing internal user (often an email), whose own permissions apply')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124')
            [CompletionResult]::new('--chat-url', '--chat-url', [CompletionResultType]::ParameterName, 'The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)')
            [CompletionResult]::new('--api-key-file', '--api-key-file', [CompletionResultType]::ParameterName, 'Read the API key from this file (''-'' = stdin) instead of ANALYST_API_KEY')
            [CompletionResult]::new('--cube-token-file', '--cube-token-file', [CompletionResultType]::ParameterName, 'Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file (''-'' = stdin) instead of ANALYST_CUBE_TOKEN')
            [CompletionResult]::new('--email', '--email', [CompletionResultType]::ParameterName, 'The user''s email address')
            [CompletionResult]::new('--attr', '--attr', [CompletionResultType]::ParameterName, 'A user attribute for row-level security (repeatable; external users only)')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'A group the user belongs to (repeatable; external users only)')
            [CompletionResult]::new('--security-context', '--security-context', [CompletionResultType]::ParameterName, 'Security context for data queries: a JSON object, or @FILE (external users only)')
            [CompletionResult]::new('--ttl', '--ttl', [CompletionResultType]::ParameterName, 'Lifetime of an ephemeral external user (e.g. 12h, 7d)')
            [CompletionResult]::new('--timezone', '--timezone', [CompletionResultType]::ParameterName, 'The IANA time zone the agent''s queries run in (timezone), e.g. Europe/Berlin')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a connection to the service')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('--persistent', '--persistent', [CompletionResultType]::ParameterName, 'Make the external user persistent (isEphemeral: false)')
            [CompletionResult]::new('--no-authoring', '--no-authoring', [CompletionResultType]::ParameterName, 'The agent may not create or change saved reports, workbooks or dashboards')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;session' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'What to write on stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'What to write on stdout')
            [CompletionResult]::new('--base-url', '--base-url', [CompletionResultType]::ParameterName, 'The account host, e.g. https://acme.cubecloud.dev')
            [CompletionResult]::new('--deployment-id', '--deployment-id', [CompletionResultType]::ParameterName, 'The deployment the session is for (deploymentId; the service requires it)')
            [CompletionResult]::new('--external-id', '--external-id', [CompletionResultType]::ParameterName, 'Id of an external user (lowercase, no spaces); created on first use')
            [CompletionResult]::new('--internal-id', '--internal-id', [CompletionResultType]::ParameterName, 'Username of an existing internal user (often an email), whose own permissions apply')
            [CompletionResult]::new('--jq', '--jq', [CompletionResultType]::ParameterName, 'Filter the JSON output through a jq expression')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout, atomically')
            [CompletionResult]::new('--branch', '--branch', [CompletionResultType]::ParameterName, 'The development branch to embed (branchName; production when left out)')
            [CompletionResult]::new('--embed-tenant', '--embed-tenant', [CompletionResultType]::ParameterName, 'The embed tenant (embedTenantName: lowercase, 5-36 of a-z 0-9 -, starting with a letter)')
            [CompletionResult]::new('--display-name', '--display-name', [CompletionResultType]::ParameterName, 'The user''s display name (userProfile; external users only)')
            [CompletionResult]::new('--picture', '--picture', [CompletionResultType]::ParameterName, 'The user''s picture, an absolute http(s) URL (userProfile; external users only)')
            [CompletionResult]::new('--setting', '--setting', [CompletionResultType]::ParameterName, 'A switch of the embedded app (settings; repeatable), e.g. allowAi=false, locale=de-DE')
            [CompletionResult]::new('--api-key-file', '--api-key-file', [CompletionResultType]::ParameterName, 'Read the API key from this file (''-'' = stdin) instead of ANALYST_API_KEY')
            [CompletionResult]::new('--email', '--email', [CompletionResultType]::ParameterName, 'The user''s email address')
            [CompletionResult]::new('--attr', '--attr', [CompletionResultType]::ParameterName, 'A user attribute for row-level security (repeatable; external users only)')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'A group the user belongs to (repeatable; external users only)')
            [CompletionResult]::new('--security-context', '--security-context', [CompletionResultType]::ParameterName, 'Security context for data queries: a JSON object, or @FILE (external users only)')
            [CompletionResult]::new('--ttl', '--ttl', [CompletionResultType]::ParameterName, 'Lifetime of an ephemeral external user (e.g. 12h, 7d)')
            [CompletionResult]::new('--timezone', '--timezone', [CompletionResultType]::ParameterName, 'The IANA time zone the agent''s queries run in (timezone), e.g. Europe/Berlin')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a connection to the service')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('--creator-mode', '--creator-mode', [CompletionResultType]::ParameterName, 'Let the user create content (creatorMode: true)')
            [CompletionResult]::new('--persistent', '--persistent', [CompletionResultType]::ParameterName, 'Make the external user persistent (isEphemeral: false)')
            [CompletionResult]::new('--no-authoring', '--no-authoring', [CompletionResultType]::ParameterName, 'The agent may not create or change saved reports, workbooks or dashboards')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'End embed sessions (idempotent)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'analyst;session;revoke' {
            [CompletionResult]::new('--base-url', '--base-url', [CompletionResultType]::ParameterName, 'The account host, e.g. https://acme.cubecloud.dev')
            [CompletionResult]::new('--api-key-file', '--api-key-file', [CompletionResultType]::ParameterName, 'Read the API key from this file (''-'' = stdin) instead of ANALYST_API_KEY')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a connection to the service')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;session;help' {
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'End embed sessions (idempotent)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'analyst;session;help;revoke' {
            break
        }
        'analyst;session;help;help' {
            break
        }
        'analyst;rows' {
            [CompletionResult]::new('--sql', '--sql', [CompletionResultType]::ParameterName, 'The SQL to run')
            [CompletionResult]::new('--sql-file', '--sql-file', [CompletionResultType]::ParameterName, 'Read the SQL from FILE (''-'' = stdin)')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'A stream saved by ''ask -o raw'' or ''ask -o events'' (''-'' = stdin; the default when stdin is a pipe)')
            [CompletionResult]::new('--query', '--query', [CompletionResultType]::ParameterName, 'Which SQL result of the saved stream: ''last'' (the last that did not fail) or a 1-based index')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'What to write on stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'What to write on stdout')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout, atomically')
            [CompletionResult]::new('--data-url', '--data-url', [CompletionResultType]::ParameterName, 'The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api')
            [CompletionResult]::new('--jq', '--jq', [CompletionResultType]::ParameterName, 'Filter the JSON output through a jq expression')
            [CompletionResult]::new('--page-size', '--page-size', [CompletionResultType]::ParameterName, 'Page through the result N rows at a time with LIMIT/OFFSET (on a line of their own, past a trailing -- comment) until a short page (the server''s cap is 50,000; SQL with its own larger LIMIT is paged up to it); a page that repeats the one before, or more rows than totalRows, is exit 7')
            [CompletionResult]::new('--order-by', '--order-by', [CompletionResultType]::ParameterName, 'Add ORDER BY COL before paging (pages of an unordered query can overlap or skip rows)')
            [CompletionResult]::new('--security-context', '--security-context', [CompletionResultType]::ParameterName, 'With ANALYST_DATA_SECRET: the signed token''s payload, a JSON object or @FILE')
            [CompletionResult]::new('--timezone', '--timezone', [CompletionResultType]::ParameterName, 'Time zone for the query (passed to the data query API)')
            [CompletionResult]::new('--cache', '--cache', [CompletionResultType]::ParameterName, 'Cache mode (passed to the data query API)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a connection to the service')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('--allow-partial', '--allow-partial', [CompletionResultType]::ParameterName, 'Fewer rows than totalRows is a warning, not exit 10')
            [CompletionResult]::new('--always', '--always', [CompletionResultType]::ParameterName, 'Run the query even when the saved result is already complete')
            [CompletionResult]::new('--no-paging', '--no-paging', [CompletionResultType]::ParameterName, 'Send the SQL as it is, in one request (an answer of exactly 50,000 rows is then exit 10)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;check' {
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'How many cases run at once')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'How many cases run at once')
            [CompletionResult]::new('--repeat', '--repeat', [CompletionResultType]::ParameterName, 'Ask every case N times (fresh threads)')
            [CompletionResult]::new('--filter', '--filter', [CompletionResultType]::ParameterName, 'Run only the cases whose name matches REGEX')
            [CompletionResult]::new('--junit', '--junit', [CompletionResultType]::ParameterName, 'Write a JUnit XML report to FILE')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'The report on stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The report on stdout')
            [CompletionResult]::new('--baseline', '--baseline', [CompletionResultType]::ParameterName, 'Compare with an earlier -o json REPORT: regressions or noise')
            [CompletionResult]::new('--min-accuracy', '--min-accuracy', [CompletionResultType]::ParameterName, 'The run passes when this share of its cases pass (0.9 or 90%)')
            [CompletionResult]::new('--pass-rate', '--pass-rate', [CompletionResultType]::ParameterName, 'A case passes when at least this share of its runs pass (0 to 1), overriding the suite''s pass_rate')
            [CompletionResult]::new('--max-seconds', '--max-seconds', [CompletionResultType]::ParameterName, 'Fail a turn that takes more than SECONDS, overriding the suite''s max_seconds')
            [CompletionResult]::new('--max-tokens', '--max-tokens', [CompletionResultType]::ParameterName, 'Fail a turn whose __usage__ reports more than N totalTokens, overriding the suite''s max_tokens')
            [CompletionResult]::new('--max-llm-calls', '--max-llm-calls', [CompletionResultType]::ParameterName, 'Fail a turn whose __usage__ reports more than N llmCalls, overriding the suite''s max_llm_calls')
            [CompletionResult]::new('--retry-errors', '--retry-errors', [CompletionResultType]::ParameterName, 'Ask again, of an earlier -o json REPORT of this suite, only the runs that ended in an error outside the agent''s answer (the service failing or unreachable, a reset, a case''s timeout, an agent crash); every other run keeps its verdict, and the report written is the merged one, each run asked again keeping the attempts it replaced. A report of another agent or another suite is refused (exit 2); a case changed since the report is asked again whole')
            [CompletionResult]::new('--shard', '--shard', [CompletionResultType]::ParameterName, 'Run the K-th of N disjoint slices of the cases: sorted by name and dealt round-robin, so no shard has more than one case more than another, and the N shards together run every case once (for a CI matrix)')
            [CompletionResult]::new('--save', '--save', [CompletionResultType]::ParameterName, 'Keep each turn''s raw stream in DIR, and what a re-grade needs (replay one with ''ask --replay'', grade them again with --regrade DIR)')
            [CompletionResult]::new('--regrade', '--regrade', [CompletionResultType]::ParameterName, 'Grade again the streams a run saved with --save DIR, against the suite as it is now, asking no turn')
            [CompletionResult]::new('--budget-tokens', '--budget-tokens', [CompletionResultType]::ParameterName, 'Start no new turn once the finished turns'' totalTokens reach N (turns in flight finish)')
            [CompletionResult]::new('--budget-usd', '--budget-usd', [CompletionResultType]::ParameterName, 'Start no new turn once the finished turns'' cost at the config file''s [prices] reaches X US dollars')
            [CompletionResult]::new('--summary', '--summary', [CompletionResultType]::ParameterName, 'Append a Markdown summary to FILE (made for $GITHUB_STEP_SUMMARY): the accuracy, a table of the cases that did not pass, every case in a collapsed block')
            [CompletionResult]::new('--jq', '--jq', [CompletionResultType]::ParameterName, 'Filter the JSON output through a jq expression')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout, atomically')
            [CompletionResult]::new('--baseline-max-age', '--baseline-max-age', [CompletionResultType]::ParameterName, 'A baseline older than this is unreliable: it gates nothing (default 14d; e.g. 36h)')
            [CompletionResult]::new('--chat-url', '--chat-url', [CompletionResultType]::ParameterName, 'The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)')
            [CompletionResult]::new('--api-key-file', '--api-key-file', [CompletionResultType]::ParameterName, 'Read the API key from this file (''-'' = stdin) instead of ANALYST_API_KEY')
            [CompletionResult]::new('--cube-token-file', '--cube-token-file', [CompletionResultType]::ParameterName, 'Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file (''-'' = stdin) instead of ANALYST_CUBE_TOKEN')
            [CompletionResult]::new('--data-url', '--data-url', [CompletionResultType]::ParameterName, 'The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api')
            [CompletionResult]::new('--external-id', '--external-id', [CompletionResultType]::ParameterName, 'Id of an external user (lowercase, no spaces); created on first use')
            [CompletionResult]::new('--internal-id', '--internal-id', [CompletionResultType]::ParameterName, 'Username of an existing internal user (often an email), whose own permissions apply')
            [CompletionResult]::new('--email', '--email', [CompletionResultType]::ParameterName, 'The user''s email address')
            [CompletionResult]::new('--attr', '--attr', [CompletionResultType]::ParameterName, 'A user attribute for row-level security (repeatable; external users only)')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'A group the user belongs to (repeatable; external users only)')
            [CompletionResult]::new('--security-context', '--security-context', [CompletionResultType]::ParameterName, 'Security context for data queries: a JSON object, or @FILE (external users only)')
            [CompletionResult]::new('--ttl', '--ttl', [CompletionResultType]::ParameterName, 'Lifetime of an ephemeral external user (e.g. 12h, 7d)')
            [CompletionResult]::new('--timezone', '--timezone', [CompletionResultType]::ParameterName, 'The IANA time zone the agent''s queries run in (timezone), e.g. Europe/Berlin')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a connection to the service')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('--list', '--list', [CompletionResultType]::ParameterName, 'Print the cases the run would ask, and ask nothing')
            [CompletionResult]::new('--expect-faithful', '--expect-faithful', [CompletionResultType]::ParameterName, 'Fail a case whose answer states a figure its rows do not hold (every case, as expect_faithful does)')
            [CompletionResult]::new('--certified', '--certified', [CompletionResultType]::ParameterName, 'With Cube''s eval files: also ask every certified query''s user_request, graded against its SQL (cases certified/NAME)')
            [CompletionResult]::new('--no-history', '--no-history', [CompletionResultType]::ParameterName, 'Record nothing of these turns in the history (as ANALYST_HISTORY=0)')
            [CompletionResult]::new('--stop-when-decided', '--stop-when-decided', [CompletionResultType]::ParameterName, 'End a case''s repeats once its verdict at its pass rate cannot change (--repeat 5 --pass-rate 0.6: three passes or three failures decide it); the report says how many runs that saved')
            [CompletionResult]::new('--tap', '--tap', [CompletionResultType]::ParameterName, 'Print TAP (Test Anything Protocol) on stdout')
            [CompletionResult]::new('--fail-on-regression', '--fail-on-regression', [CompletionResultType]::ParameterName, 'Exit 9 when --baseline finds a regression (p < 0.05, a case or the suite), never on noise; an unreliable baseline gates nothing')
            [CompletionResult]::new('--baseline-any', '--baseline-any', [CompletionResultType]::ParameterName, 'Trust the baseline whatever its age, chat URL, branch or suite')
            [CompletionResult]::new('--persistent', '--persistent', [CompletionResultType]::ParameterName, 'Make the external user persistent (isEphemeral: false)')
            [CompletionResult]::new('--no-authoring', '--no-authoring', [CompletionResultType]::ParameterName, 'The agent may not create or change saved reports, workbooks or dashboards')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Merge shards'' -o json reports into one, or render one report again')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'analyst;check;merge' {
            [CompletionResult]::new('--junit', '--junit', [CompletionResultType]::ParameterName, 'Write a JUnit XML report to FILE')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'The report on stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The report on stdout')
            [CompletionResult]::new('--summary', '--summary', [CompletionResultType]::ParameterName, 'Append a Markdown summary to FILE (made for $GITHUB_STEP_SUMMARY): the accuracy, a table of the cases that did not pass, every case in a collapsed block')
            [CompletionResult]::new('--baseline', '--baseline', [CompletionResultType]::ParameterName, 'Compare with an earlier -o json REPORT: regressions or noise')
            [CompletionResult]::new('--jq', '--jq', [CompletionResultType]::ParameterName, 'Filter the JSON output through a jq expression')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout, atomically')
            [CompletionResult]::new('--baseline-max-age', '--baseline-max-age', [CompletionResultType]::ParameterName, 'A baseline older than this is unreliable: it gates nothing (default 14d; e.g. 36h)')
            [CompletionResult]::new('--min-accuracy', '--min-accuracy', [CompletionResultType]::ParameterName, 'The run passes when this share of its cases pass (0.9 or 90%)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('--tap', '--tap', [CompletionResultType]::ParameterName, 'Print TAP (Test Anything Protocol) on stdout')
            [CompletionResult]::new('--fail-on-regression', '--fail-on-regression', [CompletionResultType]::ParameterName, 'Exit 9 when --baseline finds a regression (p < 0.05, a case or the suite), never on noise; an unreliable baseline gates nothing')
            [CompletionResult]::new('--baseline-any', '--baseline-any', [CompletionResultType]::ParameterName, 'Trust the baseline whatever its age, chat URL, branch or suite')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;check;help' {
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Merge shards'' -o json reports into one, or render one report again')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'analyst;check;help;merge' {
            break
        }
        'analyst;check;help;help' {
            break
        }
        'analyst;doctor' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'table (for a person, fitted to the terminal) or json (an array of findings)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'table (for a person, fitted to the terminal) or json (an array of findings)')
            [CompletionResult]::new('--chat-url', '--chat-url', [CompletionResultType]::ParameterName, 'The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)')
            [CompletionResult]::new('--api-key-file', '--api-key-file', [CompletionResultType]::ParameterName, 'Read the API key from this file (''-'' = stdin) instead of ANALYST_API_KEY')
            [CompletionResult]::new('--cube-token-file', '--cube-token-file', [CompletionResultType]::ParameterName, 'Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file (''-'' = stdin) instead of ANALYST_CUBE_TOKEN')
            [CompletionResult]::new('--data-url', '--data-url', [CompletionResultType]::ParameterName, 'The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api')
            [CompletionResult]::new('--base-url', '--base-url', [CompletionResultType]::ParameterName, 'The account host, for session (e.g. https://acme.cubecloud.dev)')
            [CompletionResult]::new('--external-id', '--external-id', [CompletionResultType]::ParameterName, 'Id of an external user (lowercase, no spaces); created on first use')
            [CompletionResult]::new('--internal-id', '--internal-id', [CompletionResultType]::ParameterName, 'Username of an existing internal user (often an email), whose own permissions apply')
            [CompletionResult]::new('--email', '--email', [CompletionResultType]::ParameterName, 'The user''s email address')
            [CompletionResult]::new('--attr', '--attr', [CompletionResultType]::ParameterName, 'A user attribute for row-level security (repeatable; external users only)')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'A group the user belongs to (repeatable; external users only)')
            [CompletionResult]::new('--security-context', '--security-context', [CompletionResultType]::ParameterName, 'Security context for data queries: a JSON object, or @FILE (external users only)')
            [CompletionResult]::new('--ttl', '--ttl', [CompletionResultType]::ParameterName, 'Lifetime of an ephemeral external user (e.g. 12h, 7d)')
            [CompletionResult]::new('--timezone', '--timezone', [CompletionResultType]::ParameterName, 'The IANA time zone the agent''s queries run in (timezone), e.g. Europe/Berlin')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a connection to the service')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('--offline', '--offline', [CompletionResultType]::ParameterName, 'Check the settings only: call no endpoint')
            [CompletionResult]::new('--persistent', '--persistent', [CompletionResultType]::ParameterName, 'Make the external user persistent (isEphemeral: false)')
            [CompletionResult]::new('--no-authoring', '--no-authoring', [CompletionResultType]::ParameterName, 'The agent may not create or change saved reports, workbooks or dashboards')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;config' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Print the resolved settings of the chosen profile, each with where it came from (secrets as set or unset)')
            [CompletionResult]::new('path', 'path', [CompletionResultType]::ParameterValue, 'Print the config file''s path (whether or not it exists)')
            [CompletionResult]::new('profiles', 'profiles', [CompletionResultType]::ParameterValue, 'Print the names of the config file''s profiles, one per line (what shell completion of --profile offers)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'analyst;config;list' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;config;path' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;config;profiles' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;config;help' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Print the resolved settings of the chosen profile, each with where it came from (secrets as set or unset)')
            [CompletionResult]::new('path', 'path', [CompletionResultType]::ParameterValue, 'Print the config file''s path (whether or not it exists)')
            [CompletionResult]::new('profiles', 'profiles', [CompletionResultType]::ParameterValue, 'Print the names of the config file''s profiles, one per line (what shell completion of --profile offers)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'analyst;config;help;list' {
            break
        }
        'analyst;config;help;path' {
            break
        }
        'analyst;config;help;profiles' {
            break
        }
        'analyst;config;help;help' {
            break
        }
        'analyst;completions' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'With man: write every page (analyst.1, analyst-ask.1, …) into DIR instead of printing analyst(1)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;history' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'At most N turns')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'Only the turns of this thread (ask --thread NAME)')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only turns since DURATION ago (7d, 12h) or DATE (2026-11-01)')
            [CompletionResult]::new('--grep', '--grep', [CompletionResultType]::ParameterName, 'Only turns whose question or answer matches REGEX')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'table (for a person) or json (an array)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'table (for a person) or json (an array)')
            [CompletionResult]::new('--jq', '--jq', [CompletionResultType]::ParameterName, 'Filter the JSON output through a jq expression')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only turns of this status (completed, incomplete, cut, error, …)')
            [CompletionResult]::new('--kind', '--kind', [CompletionResultType]::ParameterName, 'Only turns asked by this command: ask or check')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout, atomically')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The latest turns, newest first (the default)')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'One whole turn')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'A whole thread, question by question')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Turns, tokens, LLM calls, time and cost, grouped')
            [CompletionResult]::new('trend', 'trend', [CompletionResultType]::ParameterValue, 'A suite''s accuracy over time: a row per recorded check run')
            [CompletionResult]::new('forget', 'forget', [CompletionResultType]::ParameterValue, 'Delete turns and their thread names, erased from the file and its log')
            [CompletionResult]::new('push', 'push', [CompletionResultType]::ParameterValue, 'Send the spans a collector did not take (kept by ask and check) to the OTLP endpoint, oldest first, each once')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'analyst;history;list' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'At most N turns')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'Only the turns of this thread (ask --thread NAME)')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only turns since DURATION ago (7d, 12h) or DATE (2026-11-01)')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only turns of this status (completed, incomplete, cut, error, …)')
            [CompletionResult]::new('--kind', '--kind', [CompletionResultType]::ParameterName, 'Only turns asked by this command: ask or check')
            [CompletionResult]::new('--grep', '--grep', [CompletionResultType]::ParameterName, 'Only turns whose question or answer matches REGEX')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'table (for a person) or json (an array)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'table (for a person) or json (an array)')
            [CompletionResult]::new('--jq', '--jq', [CompletionResultType]::ParameterName, 'Filter the JSON output through a jq expression')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout, atomically')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;history;show' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'table (for a person) or json')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'table (for a person) or json')
            [CompletionResult]::new('--jq', '--jq', [CompletionResultType]::ParameterName, 'Filter the JSON output through a jq expression')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout, atomically')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;history;export' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'markdown, html (one inert page, as ask -o html) or json')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'markdown, html (one inert page, as ask -o html) or json')
            [CompletionResult]::new('--jq', '--jq', [CompletionResultType]::ParameterName, 'Filter the JSON output through a jq expression')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout, atomically')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;history;usage' {
            [CompletionResult]::new('--by', '--by', [CompletionResultType]::ParameterName, 'How turns are grouped')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only turns since DURATION ago (30d) or DATE (2026-11-01)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'table (for a person), json or csv')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'table (for a person), json or csv')
            [CompletionResult]::new('--jq', '--jq', [CompletionResultType]::ParameterName, 'Filter the JSON output through a jq expression')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout, atomically')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;history;trend' {
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only runs since DURATION ago (30d) or DATE (2026-11-01)')
            [CompletionResult]::new('--last', '--last', [CompletionResultType]::ParameterName, 'Only the latest N runs')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'table (for a person; the default on a terminal), csv (the default otherwise), json (an array), or svg (a line chart of accuracy over time, drawn offline as ask -o svg draws)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'table (for a person; the default on a terminal), csv (the default otherwise), json (an array), or svg (a line chart of accuracy over time, drawn offline as ask -o svg draws)')
            [CompletionResult]::new('--jq', '--jq', [CompletionResultType]::ParameterName, 'Filter the JSON output through a jq expression')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout, atomically')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;history;forget' {
            [CompletionResult]::new('--before', '--before', [CompletionResultType]::ParameterName, 'Delete the turns before DATE (2026-01-01) or DURATION ago (90d)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'Delete a thread''s turns and its name')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Delete every turn and thread name')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;history;push' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;history;help' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The latest turns, newest first (the default)')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'One whole turn')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'A whole thread, question by question')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Turns, tokens, LLM calls, time and cost, grouped')
            [CompletionResult]::new('trend', 'trend', [CompletionResultType]::ParameterValue, 'A suite''s accuracy over time: a row per recorded check run')
            [CompletionResult]::new('forget', 'forget', [CompletionResultType]::ParameterValue, 'Delete turns and their thread names, erased from the file and its log')
            [CompletionResult]::new('push', 'push', [CompletionResultType]::ParameterValue, 'Send the spans a collector did not take (kept by ask and check) to the OTLP endpoint, oldest first, each once')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'analyst;history;help;list' {
            break
        }
        'analyst;history;help;show' {
            break
        }
        'analyst;history;help;export' {
            break
        }
        'analyst;history;help;usage' {
            break
        }
        'analyst;history;help;trend' {
            break
        }
        'analyst;history;help;forget' {
            break
        }
        'analyst;history;help;push' {
            break
        }
        'analyst;history;help;help' {
            break
        }
        'analyst;version' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Use this profile of the config file (analyst config path prints where it is)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log each HTTP request and response status to stderr (the key is always redacted)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'analyst;help' {
            [CompletionResult]::new('ask', 'ask', [CompletionResultType]::ParameterValue, 'Ask the agent a question: the answer, CSV, a chart or JSON')
            [CompletionResult]::new('abort', 'abort', [CompletionResultType]::ParameterValue, 'Stop a running chat, as the identity that started it')
            [CompletionResult]::new('session', 'session', [CompletionResultType]::ParameterValue, 'Mint an embed session for signed embedding, or revoke some')
            [CompletionResult]::new('rows', 'rows', [CompletionResultType]::ParameterValue, 'Every row of a (truncated) SQL result, from the data query API')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Ask a suite of known questions: smoke checks and evals')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check the setup: what is set, from where, and what answers')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Show the resolved settings, or the config file''s path')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script, or the man page')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'The local record of past turns: list, show, export, usage')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version, its commit and its target')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'analyst;help;ask' {
            break
        }
        'analyst;help;abort' {
            break
        }
        'analyst;help;session' {
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'End embed sessions (idempotent)')
            break
        }
        'analyst;help;session;revoke' {
            break
        }
        'analyst;help;rows' {
            break
        }
        'analyst;help;check' {
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Merge shards'' -o json reports into one, or render one report again')
            break
        }
        'analyst;help;check;merge' {
            break
        }
        'analyst;help;doctor' {
            break
        }
        'analyst;help;config' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Print the resolved settings of the chosen profile, each with where it came from (secrets as set or unset)')
            [CompletionResult]::new('path', 'path', [CompletionResultType]::ParameterValue, 'Print the config file''s path (whether or not it exists)')
            [CompletionResult]::new('profiles', 'profiles', [CompletionResultType]::ParameterValue, 'Print the names of the config file''s profiles, one per line (what shell completion of --profile offers)')
            break
        }
        'analyst;help;config;list' {
            break
        }
        'analyst;help;config;path' {
            break
        }
        'analyst;help;config;profiles' {
            break
        }
        'analyst;help;completions' {
            break
        }
        'analyst;help;history' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The latest turns, newest first (the default)')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'One whole turn')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'A whole thread, question by question')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Turns, tokens, LLM calls, time and cost, grouped')
            [CompletionResult]::new('trend', 'trend', [CompletionResultType]::ParameterValue, 'A suite''s accuracy over time: a row per recorded check run')
            [CompletionResult]::new('forget', 'forget', [CompletionResultType]::ParameterValue, 'Delete turns and their thread names, erased from the file and its log')
            [CompletionResult]::new('push', 'push', [CompletionResultType]::ParameterValue, 'Send the spans a collector did not take (kept by ask and check) to the OTLP endpoint, oldest first, each once')
            break
        }
        'analyst;help;history;list' {
            break
        }
        'analyst;help;history;show' {
            break
        }
        'analyst;help;history;export' {
            break
        }
        'analyst;help;history;usage' {
            break
        }
        'analyst;help;history;trend' {
            break
        }
        'analyst;help;history;forget' {
            break
        }
        'analyst;help;history;push' {
            break
        }
        'analyst;help;version' {
            break
        }
        'analyst;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
