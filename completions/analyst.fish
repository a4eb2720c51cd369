# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_analyst_global_optspecs
    string join \n q/quiet connect-timeout= timeout= idle-timeout= retries= color= profile= v/verbose h/help V/version
end

function __fish_analyst_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_analyst_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_analyst_using_subcommand
    set -l cmd (__fish_analyst_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c analyst -n "__fish_analyst_needs_command" -l connect-timeout -d '--connect-timeout before the command' -r
complete -c analyst -n "__fish_analyst_needs_command" -l timeout -d '--timeout before the command' -r
complete -c analyst -n "__fish_analyst_needs_command" -l idle-timeout -d '--idle-timeout before the command' -r
complete -c analyst -n "__fish_analyst_needs_command" -l retries -d '--retries before the command' -r
complete -c analyst -n "__fish_analyst_needs_command" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_needs_command" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_needs_command" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_needs_command" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_needs_command" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_needs_command" -f -a "ask" -d 'Ask the agent a question: the answer, CSV, a chart or JSON'
complete -c analyst -n "__fish_analyst_needs_command" -f -a "abort" -d 'Stop a running chat, as the identity that started it'
complete -c analyst -n "__fish_analyst_needs_command" -f -a "session" -d 'Mint an embed session for signed embedding, or revoke some'
complete -c analyst -n "__fish_analyst_needs_command" -f -a "rows" -d 'Every row of a (truncated) SQL result, from the data query API'
complete -c analyst -n "__fish_analyst_needs_command" -f -a "check" -d 'Ask a suite of known questions: smoke checks and evals'
complete -c analyst -n "__fish_analyst_needs_command" -f -a "doctor" -d 'Check the setup: what is set, from where, and what answers'
complete -c analyst -n "__fish_analyst_needs_command" -f -a "config" -d 'Show the resolved settings, or the config file\'s path'
complete -c analyst -n "__fish_analyst_needs_command" -f -a "completions" -d 'Print a shell completion script, or the man page'
complete -c analyst -n "__fish_analyst_needs_command" -f -a "history" -d 'The local record of past turns: list, show, export, usage'
complete -c analyst -n "__fish_analyst_needs_command" -f -a "version" -d 'Print the version, its commit and its target'
complete -c analyst -n "__fish_analyst_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l chat-id -d 'Continue this thread (its chat id, printed on stderr as \'chat: <id>\')' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l thread -d 'Continue the thread named NAME, or start it' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -s o -l output -d 'What to write on stdout' -r -f -a "answer\t'The final answer\'s text and a newline'
raw\t'The stream\'s bytes as received, each line flushed as it completes'
events\t'One JSON object per stream line, with toolCall input and result parsed'
json\t'One JSON document: chat id, status, answer, queries with typed rows, tool calls, errors'
csv\t'The selected SQL result as RFC 4180 CSV with a header row'
table\t'The selected SQL result as an aligned table for a person (numbers right-aligned; cut to a terminal\'s width)'
vega\t'The selected result\'s Vega-Lite v5 spec with the rows merged in as data.values'
svg\t'The selected result\'s chart drawn as SVG by Vega itself, in-process and offline'
png\t'That chart as a PNG picture, text in a font shipped in analyst (at --scale)'
html\t'One self-contained HTML page: question, answer, the chart inline, each result\'s SQL and rows'"
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l jq -d 'Filter the JSON output through a jq expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l output-file -d 'Write the output to FILE instead of stdout, atomically' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l replay -d 'Read a saved stream (\'-\' = stdin) instead of calling the service' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l image -d 'Send an image with the question (repeatable; \'-\' reads one from stdin when the question is an argument): PNG, JPEG, GIF or WebP, at most 20 MiB' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l thread-ttl -d 'A thread whose last turn is older than this starts afresh' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l resume -d 'With --chat-id: resume that suspended turn (sends chatId and messageId; no question needed)' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l branch -d 'Run queries against this development branch (activeBranchName)' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l query -d 'Which SQL result csv, vega and svg use: \'last\' (the last one that did not fail) or a 1-based index' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l tee -d 'Also save the raw stream, byte for byte, to FILE' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l vega-config -d 'For vega, svg, png and html: a Vega config merged into the chart\'s (a JSON file, or a theme of vega-themes: dark, excel, fivethirtyeight, ggplot2, googlecharts, latimes, powerbi, quartz, urbaninstitute, vox, carbonwhite, carbong10, carbong90, carbong100)' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l scale -d 'For -o png: pixels per SVG pixel (1 to 8)' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l expect-answer -d 'Exit 9 unless the final answer matches this regular expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l expect-sql -d 'Exit 9 unless some SQL query of the agent matches this regular expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l expect-tool -d 'Exit 9 unless the agent called this tool (repeatable; semantic*/cube* names are the same tool)' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l min-rows -d 'Exit 9 unless the selected SQL result (--query) has at least N rows (totalRows)' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l data-url -d 'The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l chat-url -d 'The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l api-key-file -d 'Read the API key from this file (\'-\' = stdin) instead of ANALYST_API_KEY' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l cube-token-file -d 'Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file (\'-\' = stdin) instead of ANALYST_CUBE_TOKEN' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l external-id -d 'Id of an external user (lowercase, no spaces); created on first use' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l internal-id -d 'Username of an existing internal user (often an email), whose own permissions apply' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l email -d 'The user\'s email address' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l attr -d 'A user attribute for row-level security (repeatable; external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l group -d 'A group the user belongs to (repeatable; external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l security-context -d 'Security context for data queries: a JSON object, or @FILE (external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l ttl -d 'Lifetime of an ephemeral external user (e.g. 12h, 7d)' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l timezone -d 'The IANA time zone the agent\'s queries run in (timezone), e.g. Europe/Berlin' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l connect-timeout -d 'How long to wait for a connection to the service' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l timeout -d 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l idle-timeout -d 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l retries -d 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id' -r
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l all-rows -d 'Fetch every row of a truncated result (csv, vega, json)'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l no-history -d 'Record nothing of this turn in the history (as ANALYST_HISTORY=0)'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l default-branch -d 'Say that --branch names the default (main/production) branch'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l fail-on-tool-error -d 'Exit 8 when a tool result carries an error'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l allow-partial -d 'For csv, vega and json: a truncated result is a warning, not exit 10'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l expect-faithful -d 'Exit 9 when a figure of the answer is not in the rows'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l allow-questions -d 'An agent that asks back: its question is the answer, exit 0 (else exit 12)'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l persistent -d 'Make the external user persistent (isEphemeral: false)'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -l no-authoring -d 'The agent may not create or change saved reports, workbooks or dashboards'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand ask" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l chat-id -d 'The chat to stop (printed by ask on stderr as \'chat: <id>\')' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l external-id -d 'Id of an external user (lowercase, no spaces); created on first use' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l internal-id -d 'Username of an existing internal user (often an email), whose own permissions apply' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l timeout -d 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l chat-url -d 'The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l api-key-file -d 'Read the API key from this file (\'-\' = stdin) instead of ANALYST_API_KEY' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l cube-token-file -d 'Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file (\'-\' = stdin) instead of ANALYST_CUBE_TOKEN' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l email -d 'The user\'s email address' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l attr -d 'A user attribute for row-level security (repeatable; external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l group -d 'A group the user belongs to (repeatable; external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l security-context -d 'Security context for data queries: a JSON object, or @FILE (external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l ttl -d 'Lifetime of an ephemeral external user (e.g. 12h, 7d)' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l timezone -d 'The IANA time zone the agent\'s queries run in (timezone), e.g. Europe/Berlin' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l connect-timeout -d 'How long to wait for a connection to the service' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l idle-timeout -d 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l retries -d 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id' -r
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l persistent -d 'Make the external user persistent (isEphemeral: false)'
complete -c analyst -n "__fish_analyst_using_subcommand abort" -l no-authoring -d 'The agent may not create or change saved reports, workbooks or dashboards'
complete -c analyst -n "__fish_analyst_using_subcommand abort" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand abort" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand abort" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand abort" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -s o -l output -d 'What to write on stdout' -r -f -a "text\t'The sessionId and a newline'
json\t'{"sessionId": "…"}'"
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l base-url -d 'The account host, e.g. https://acme.cubecloud.dev' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l deployment-id -d 'The deployment the session is for (deploymentId; the service requires it)' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l external-id -d 'Id of an external user (lowercase, no spaces); created on first use' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l internal-id -d 'Username of an existing internal user (often an email), whose own permissions apply' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l jq -d 'Filter the JSON output through a jq expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l output-file -d 'Write the output to FILE instead of stdout, atomically' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l branch -d 'The development branch to embed (branchName; production when left out)' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l embed-tenant -d 'The embed tenant (embedTenantName: lowercase, 5-36 of a-z 0-9 -, starting with a letter)' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l display-name -d 'The user\'s display name (userProfile; external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l picture -d 'The user\'s picture, an absolute http(s) URL (userProfile; external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l setting -d 'A switch of the embedded app (settings; repeatable), e.g. allowAi=false, locale=de-DE' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l api-key-file -d 'Read the API key from this file (\'-\' = stdin) instead of ANALYST_API_KEY' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l email -d 'The user\'s email address' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l attr -d 'A user attribute for row-level security (repeatable; external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l group -d 'A group the user belongs to (repeatable; external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l security-context -d 'Security context for data queries: a JSON object, or @FILE (external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l ttl -d 'Lifetime of an ephemeral external user (e.g. 12h, 7d)' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l timezone -d 'The IANA time zone the agent\'s queries run in (timezone), e.g. Europe/Berlin' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l connect-timeout -d 'How long to wait for a connection to the service' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l timeout -d 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l idle-timeout -d 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l retries -d 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l creator-mode -d 'Let the user create content (creatorMode: true)'
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l persistent -d 'Make the external user persistent (isEphemeral: false)'
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -l no-authoring -d 'The agent may not create or change saved reports, workbooks or dashboards'
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -f -a "revoke" -d 'End embed sessions (idempotent)'
complete -c analyst -n "__fish_analyst_using_subcommand session; and not __fish_seen_subcommand_from revoke help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from revoke" -l base-url -d 'The account host, e.g. https://acme.cubecloud.dev' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from revoke" -l api-key-file -d 'Read the API key from this file (\'-\' = stdin) instead of ANALYST_API_KEY' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from revoke" -l connect-timeout -d 'How long to wait for a connection to the service' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from revoke" -l timeout -d 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from revoke" -l idle-timeout -d 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from revoke" -l retries -d 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id' -r
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from revoke" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from revoke" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from revoke" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from revoke" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from revoke" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from revoke" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "revoke" -d 'End embed sessions (idempotent)'
complete -c analyst -n "__fish_analyst_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l sql -d 'The SQL to run' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l sql-file -d 'Read the SQL from FILE (\'-\' = stdin)' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l from -d 'A stream saved by \'ask -o raw\' or \'ask -o events\' (\'-\' = stdin; the default when stdin is a pipe)' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l query -d 'Which SQL result of the saved stream: \'last\' (the last that did not fail) or a 1-based index' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -s o -l output -d 'What to write on stdout' -r -f -a "csv\t'RFC 4180 CSV with a header row'
tsv\t'Tab-separated with a header row (\\t \\n \\r \\\\ escaped)'
json\t'One JSON array of objects, numbers and booleans typed'
ndjson\t'One JSON object per row, numbers and booleans typed'
table\t'An aligned table for a person (numbers right-aligned; cut to a terminal\'s width; holds every row to align them)'
parquet\t'A Parquet file of typed columns (to --output-file, or to stdout that is not a terminal)'"
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l output-file -d 'Write the output to FILE instead of stdout, atomically' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l data-url -d 'The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l jq -d 'Filter the JSON output through a jq expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l page-size -d 'Page through the result N rows at a time with LIMIT/OFFSET (on a line of their own, past a trailing -- comment) until a short page (the server\'s cap is 50,000; SQL with its own larger LIMIT is paged up to it); a page that repeats the one before, or more rows than totalRows, is exit 7' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l order-by -d 'Add ORDER BY COL before paging (pages of an unordered query can overlap or skip rows)' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l security-context -d 'With ANALYST_DATA_SECRET: the signed token\'s payload, a JSON object or @FILE' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l timezone -d 'Time zone for the query (passed to the data query API)' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l cache -d 'Cache mode (passed to the data query API)' -r -f -a "stale-if-slow\t'Serve stale data if the query is slow'
stale-while-revalidate\t'Serve stale data and refresh in the background'
must-revalidate\t'Revalidate before serving'
no-cache\t'Do not use the cache'"
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l connect-timeout -d 'How long to wait for a connection to the service' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l timeout -d 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l idle-timeout -d 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l retries -d 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id' -r
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l allow-partial -d 'Fewer rows than totalRows is a warning, not exit 10'
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l always -d 'Run the query even when the saved result is already complete'
complete -c analyst -n "__fish_analyst_using_subcommand rows" -l no-paging -d 'Send the SQL as it is, in one request (an answer of exactly 50,000 rows is then exit 10)'
complete -c analyst -n "__fish_analyst_using_subcommand rows" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand rows" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand rows" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand rows" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -s j -l jobs -d 'How many cases run at once' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l repeat -d 'Ask every case N times (fresh threads)' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l filter -d 'Run only the cases whose name matches REGEX' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l junit -d 'Write a JUnit XML report to FILE' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -s o -l output -d 'The report on stdout' -r -f -a "json\t'One JSON document with every case\'s result and timings'
markdown\t'The Markdown summary (as --summary writes it) on stdout'
html\t'One self-contained, offline, inert HTML page: the accuracy, a chart of verdicts, every case'"
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l baseline -d 'Compare with an earlier -o json REPORT: regressions or noise' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l min-accuracy -d 'The run passes when this share of its cases pass (0.9 or 90%)' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l pass-rate -d 'A case passes when at least this share of its runs pass (0 to 1), overriding the suite\'s pass_rate' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l max-seconds -d 'Fail a turn that takes more than SECONDS, overriding the suite\'s max_seconds' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l max-tokens -d 'Fail a turn whose __usage__ reports more than N totalTokens, overriding the suite\'s max_tokens' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l max-llm-calls -d 'Fail a turn whose __usage__ reports more than N llmCalls, overriding the suite\'s max_llm_calls' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l retry-errors -d 'Ask again, of an earlier -o json REPORT of this suite, only the runs that ended in an error outside the agent\'s answer (the service failing or unreachable, a reset, a case\'s timeout, an agent crash); every other run keeps its verdict, and the report written is the merged one, each run asked again keeping the attempts it replaced. A report of another agent or another suite is refused (exit 2); a case changed since the report is asked again whole' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l shard -d 'Run the K-th of N disjoint slices of the cases: sorted by name and dealt round-robin, so no shard has more than one case more than another, and the N shards together run every case once (for a CI matrix)' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l save -d 'Keep each turn\'s raw stream in DIR, and what a re-grade needs (replay one with \'ask --replay\', grade them again with --regrade DIR)' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l regrade -d 'Grade again the streams a run saved with --save DIR, against the suite as it is now, asking no turn' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l budget-tokens -d 'Start no new turn once the finished turns\' totalTokens reach N (turns in flight finish)' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l budget-usd -d 'Start no new turn once the finished turns\' cost at the config file\'s [prices] reaches X US dollars' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l summary -d 'Append a Markdown summary to FILE (made for $GITHUB_STEP_SUMMARY): the accuracy, a table of the cases that did not pass, every case in a collapsed block' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l jq -d 'Filter the JSON output through a jq expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l output-file -d 'Write the output to FILE instead of stdout, atomically' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l baseline-max-age -d 'A baseline older than this is unreliable: it gates nothing (default 14d; e.g. 36h)' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l chat-url -d 'The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l api-key-file -d 'Read the API key from this file (\'-\' = stdin) instead of ANALYST_API_KEY' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l cube-token-file -d 'Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file (\'-\' = stdin) instead of ANALYST_CUBE_TOKEN' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l data-url -d 'The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l external-id -d 'Id of an external user (lowercase, no spaces); created on first use' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l internal-id -d 'Username of an existing internal user (often an email), whose own permissions apply' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l email -d 'The user\'s email address' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l attr -d 'A user attribute for row-level security (repeatable; external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l group -d 'A group the user belongs to (repeatable; external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l security-context -d 'Security context for data queries: a JSON object, or @FILE (external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l ttl -d 'Lifetime of an ephemeral external user (e.g. 12h, 7d)' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l timezone -d 'The IANA time zone the agent\'s queries run in (timezone), e.g. Europe/Berlin' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l connect-timeout -d 'How long to wait for a connection to the service' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l timeout -d 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l idle-timeout -d 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l retries -d 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l list -d 'Print the cases the run would ask, and ask nothing'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l expect-faithful -d 'Fail a case whose answer states a figure its rows do not hold (every case, as expect_faithful does)'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l certified -d 'With Cube\'s eval files: also ask every certified query\'s user_request, graded against its SQL (cases certified/NAME)'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l no-history -d 'Record nothing of these turns in the history (as ANALYST_HISTORY=0)'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l stop-when-decided -d 'End a case\'s repeats once its verdict at its pass rate cannot change (--repeat 5 --pass-rate 0.6: three passes or three failures decide it); the report says how many runs that saved'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l tap -d 'Print TAP (Test Anything Protocol) on stdout'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l fail-on-regression -d 'Exit 9 when --baseline finds a regression (p < 0.05, a case or the suite), never on noise; an unreliable baseline gates nothing'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l baseline-any -d 'Trust the baseline whatever its age, chat URL, branch or suite'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l persistent -d 'Make the external user persistent (isEphemeral: false)'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -l no-authoring -d 'The agent may not create or change saved reports, workbooks or dashboards'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -a "merge" -d 'Merge shards\' -o json reports into one, or render one report again'
complete -c analyst -n "__fish_analyst_using_subcommand check; and not __fish_seen_subcommand_from merge help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -l junit -d 'Write a JUnit XML report to FILE' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -s o -l output -d 'The report on stdout' -r -f -a "json\t'One JSON document with every case\'s result and timings'
markdown\t'The Markdown summary (as --summary writes it) on stdout'
html\t'One self-contained, offline, inert HTML page: the accuracy, a chart of verdicts, every case'"
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -l summary -d 'Append a Markdown summary to FILE (made for $GITHUB_STEP_SUMMARY): the accuracy, a table of the cases that did not pass, every case in a collapsed block' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -l baseline -d 'Compare with an earlier -o json REPORT: regressions or noise' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -l jq -d 'Filter the JSON output through a jq expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -l output-file -d 'Write the output to FILE instead of stdout, atomically' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -l baseline-max-age -d 'A baseline older than this is unreliable: it gates nothing (default 14d; e.g. 36h)' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -l min-accuracy -d 'The run passes when this share of its cases pass (0.9 or 90%)' -r
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -l tap -d 'Print TAP (Test Anything Protocol) on stdout'
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -l fail-on-regression -d 'Exit 9 when --baseline finds a regression (p < 0.05, a case or the suite), never on noise; an unreliable baseline gates nothing'
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -l baseline-any -d 'Trust the baseline whatever its age, chat URL, branch or suite'
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from merge" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from help" -f -a "merge" -d 'Merge shards\' -o json reports into one, or render one report again'
complete -c analyst -n "__fish_analyst_using_subcommand check; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -s o -l output -d 'table (for a person, fitted to the terminal) or json (an array of findings)' -r -f -a "table\t'Aligned, for a person'
json\t'JSON'"
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l chat-url -d 'The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l api-key-file -d 'Read the API key from this file (\'-\' = stdin) instead of ANALYST_API_KEY' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l cube-token-file -d 'Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file (\'-\' = stdin) instead of ANALYST_CUBE_TOKEN' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l data-url -d 'The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l base-url -d 'The account host, for session (e.g. https://acme.cubecloud.dev)' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l external-id -d 'Id of an external user (lowercase, no spaces); created on first use' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l internal-id -d 'Username of an existing internal user (often an email), whose own permissions apply' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l email -d 'The user\'s email address' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l attr -d 'A user attribute for row-level security (repeatable; external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l group -d 'A group the user belongs to (repeatable; external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l security-context -d 'Security context for data queries: a JSON object, or @FILE (external users only)' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l ttl -d 'Lifetime of an ephemeral external user (e.g. 12h, 7d)' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l timezone -d 'The IANA time zone the agent\'s queries run in (timezone), e.g. Europe/Berlin' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l connect-timeout -d 'How long to wait for a connection to the service' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l timeout -d 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l idle-timeout -d 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l retries -d 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id' -r
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l offline -d 'Check the settings only: call no endpoint'
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l persistent -d 'Make the external user persistent (isEphemeral: false)'
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -l no-authoring -d 'The agent may not create or change saved reports, workbooks or dashboards'
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand config; and not __fish_seen_subcommand_from list path profiles help" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand config; and not __fish_seen_subcommand_from list path profiles help" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and not __fish_seen_subcommand_from list path profiles help" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand config; and not __fish_seen_subcommand_from list path profiles help" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and not __fish_seen_subcommand_from list path profiles help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand config; and not __fish_seen_subcommand_from list path profiles help" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand config; and not __fish_seen_subcommand_from list path profiles help" -f -a "list" -d 'Print the resolved settings of the chosen profile, each with where it came from (secrets as set or unset)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and not __fish_seen_subcommand_from list path profiles help" -f -a "path" -d 'Print the config file\'s path (whether or not it exists)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and not __fish_seen_subcommand_from list path profiles help" -f -a "profiles" -d 'Print the names of the config file\'s profiles, one per line (what shell completion of --profile offers)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and not __fish_seen_subcommand_from list path profiles help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from list" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from list" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from path" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from path" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from path" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from path" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from path" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from path" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from profiles" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from profiles" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from profiles" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from profiles" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from profiles" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from profiles" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "list" -d 'Print the resolved settings of the chosen profile, each with where it came from (secrets as set or unset)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "path" -d 'Print the config file\'s path (whether or not it exists)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "profiles" -d 'Print the names of the config file\'s profiles, one per line (what shell completion of --profile offers)'
complete -c analyst -n "__fish_analyst_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c analyst -n "__fish_analyst_using_subcommand completions" -l dir -d 'With man: write every page (analyst.1, analyst-ask.1, …) into DIR instead of printing analyst(1)' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand completions" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand completions" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand completions" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand completions" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand completions" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -l limit -d 'At most N turns' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -l thread -d 'Only the turns of this thread (ask --thread NAME)' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -l since -d 'Only turns since DURATION ago (7d, 12h) or DATE (2026-11-01)' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -l grep -d 'Only turns whose question or answer matches REGEX' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -s o -l output -d 'table (for a person) or json (an array)' -r -f -a "table\t'Aligned, for a person'
json\t'JSON'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -l jq -d 'Filter the JSON output through a jq expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -l status -d 'Only turns of this status (completed, incomplete, cut, error, …)' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -l kind -d 'Only turns asked by this command: ask or check' -r -f -a "ask\t'Turns of analyst ask'
check\t'Turns of analyst check (one per run of a case)'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -l output-file -d 'Write the output to FILE instead of stdout, atomically' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -f -a "list" -d 'The latest turns, newest first (the default)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -f -a "show" -d 'One whole turn'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -f -a "export" -d 'A whole thread, question by question'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -f -a "usage" -d 'Turns, tokens, LLM calls, time and cost, grouped'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -f -a "trend" -d 'A suite\'s accuracy over time: a row per recorded check run'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -f -a "forget" -d 'Delete turns and their thread names, erased from the file and its log'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -f -a "push" -d 'Send the spans a collector did not take (kept by ask and check) to the OTLP endpoint, oldest first, each once'
complete -c analyst -n "__fish_analyst_using_subcommand history; and not __fish_seen_subcommand_from list show export usage trend forget push help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -l limit -d 'At most N turns' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -l thread -d 'Only the turns of this thread (ask --thread NAME)' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -l since -d 'Only turns since DURATION ago (7d, 12h) or DATE (2026-11-01)' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -l status -d 'Only turns of this status (completed, incomplete, cut, error, …)' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -l kind -d 'Only turns asked by this command: ask or check' -r -f -a "ask\t'Turns of analyst ask'
check\t'Turns of analyst check (one per run of a case)'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -l grep -d 'Only turns whose question or answer matches REGEX' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -s o -l output -d 'table (for a person) or json (an array)' -r -f -a "table\t'Aligned, for a person'
json\t'JSON'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -l jq -d 'Filter the JSON output through a jq expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -l output-file -d 'Write the output to FILE instead of stdout, atomically' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from show" -s o -l output -d 'table (for a person) or json' -r -f -a "table\t'Aligned, for a person'
json\t'JSON'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from show" -l jq -d 'Filter the JSON output through a jq expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from show" -l output-file -d 'Write the output to FILE instead of stdout, atomically' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from show" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from show" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from export" -s o -l output -d 'markdown, html (one inert page, as ask -o html) or json' -r -f -a "markdown\t'Markdown: each question, its answer, its SQL in code blocks'
html\t'One self-contained, inert HTML page'
json\t'JSON: the turns with their queries'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from export" -l jq -d 'Filter the JSON output through a jq expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from export" -l output-file -d 'Write the output to FILE instead of stdout, atomically' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from export" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from export" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from export" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from export" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from export" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from usage" -l by -d 'How turns are grouped' -r -f -a "day\t'By day (UTC)'
week\t'By ISO 8601 week (2026-W48)'
month\t'By month'
thread\t'By thread name'
agent\t'By chat URL'
model\t'By model'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from usage" -l since -d 'Only turns since DURATION ago (30d) or DATE (2026-11-01)' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from usage" -s o -l output -d 'table (for a person), json or csv' -r -f -a "table\t'Aligned, for a person'
json\t'JSON (an array)'
csv\t'CSV'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from usage" -l jq -d 'Filter the JSON output through a jq expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from usage" -l output-file -d 'Write the output to FILE instead of stdout, atomically' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from usage" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from usage" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from usage" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from usage" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from usage" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from usage" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from trend" -l since -d 'Only runs since DURATION ago (30d) or DATE (2026-11-01)' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from trend" -l last -d 'Only the latest N runs' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from trend" -s o -l output -d 'table (for a person; the default on a terminal), csv (the default otherwise), json (an array), or svg (a line chart of accuracy over time, drawn offline as ask -o svg draws)' -r -f -a "table\t'Aligned, for a person'
csv\t'CSV'
json\t'JSON (an array)'
svg\t'A line chart of accuracy over time (SVG)'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from trend" -l jq -d 'Filter the JSON output through a jq expression' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from trend" -l output-file -d 'Write the output to FILE instead of stdout, atomically' -r -F
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from trend" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from trend" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from trend" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from trend" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from trend" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from trend" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from forget" -l before -d 'Delete the turns before DATE (2026-01-01) or DURATION ago (90d)' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from forget" -l thread -d 'Delete a thread\'s turns and its name' -r
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from forget" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from forget" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from forget" -l all -d 'Delete every turn and thread name'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from forget" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from forget" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from forget" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from forget" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from push" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from push" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from push" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from push" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from push" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from push" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "list" -d 'The latest turns, newest first (the default)'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "show" -d 'One whole turn'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "export" -d 'A whole thread, question by question'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "usage" -d 'Turns, tokens, LLM calls, time and cost, grouped'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "trend" -d 'A suite\'s accuracy over time: a row per recorded check run'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "forget" -d 'Delete turns and their thread names, erased from the file and its log'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "push" -d 'Send the spans a collector did not take (kept by ask and check) to the OTLP endpoint, oldest first, each once'
complete -c analyst -n "__fish_analyst_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c analyst -n "__fish_analyst_using_subcommand version" -l color -d 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set to something'
always\t'Always, also in a pipe'
never\t'Never'"
complete -c analyst -n "__fish_analyst_using_subcommand version" -l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '(analyst config profiles 2>/dev/null)'
complete -c analyst -n "__fish_analyst_using_subcommand version" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c analyst -n "__fish_analyst_using_subcommand version" -s v -l verbose -d 'Log each HTTP request and response status to stderr (the key is always redacted)'
complete -c analyst -n "__fish_analyst_using_subcommand version" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c analyst -n "__fish_analyst_using_subcommand version" -s V -l version -d 'Print version'
complete -c analyst -n "__fish_analyst_using_subcommand help; and not __fish_seen_subcommand_from ask abort session rows check doctor config completions history version help" -f -a "ask" -d 'Ask the agent a question: the answer, CSV, a chart or JSON'
complete -c analyst -n "__fish_analyst_using_subcommand help; and not __fish_seen_subcommand_from ask abort session rows check doctor config completions history version help" -f -a "abort" -d 'Stop a running chat, as the identity that started it'
complete -c analyst -n "__fish_analyst_using_subcommand help; and not __fish_seen_subcommand_from ask abort session rows check doctor config completions history version help" -f -a "session" -d 'Mint an embed session for signed embedding, or revoke some'
complete -c analyst -n "__fish_analyst_using_subcommand help; and not __fish_seen_subcommand_from ask abort session rows check doctor config completions history version help" -f -a "rows" -d 'Every row of a (truncated) SQL result, from the data query API'
complete -c analyst -n "__fish_analyst_using_subcommand help; and not __fish_seen_subcommand_from ask abort session rows check doctor config completions history version help" -f -a "check" -d 'Ask a suite of known questions: smoke checks and evals'
complete -c analyst -n "__fish_analyst_using_subcommand help; and not __fish_seen_subcommand_from ask abort session rows check doctor config completions history version help" -f -a "doctor" -d 'Check the setup: what is set, from where, and what answers'
complete -c analyst -n "__fish_analyst_using_subcommand help; and not __fish_seen_subcommand_from ask abort session rows check doctor config completions history version help" -f -a "config" -d 'Show the resolved settings, or the config file\'s path'
complete -c analyst -n "__fish_analyst_using_subcommand help; and not __fish_seen_subcommand_from ask abort session rows check doctor config completions history version help" -f -a "completions" -d 'Print a shell completion script, or the man page'
complete -c analyst -n "__fish_analyst_using_subcommand help; and not __fish_seen_subcommand_from ask abort session rows check doctor config completions history version help" -f -a "history" -d 'The local record of past turns: list, show, export, usage'
complete -c analyst -n "__fish_analyst_using_subcommand help; and not __fish_seen_subcommand_from ask abort session rows check doctor config completions history version help" -f -a "version" -d 'Print the version, its commit and its target'
complete -c analyst -n "__fish_analyst_using_subcommand help; and not __fish_seen_subcommand_from ask abort session rows check doctor config completions history version help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c analyst -n "__fish_analyst_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "revoke" -d 'End embed sessions (idempotent)'
complete -c analyst -n "__fish_analyst_using_subcommand help; and __fish_seen_subcommand_from check" -f -a "merge" -d 'Merge shards\' -o json reports into one, or render one report again'
complete -c analyst -n "__fish_analyst_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "list" -d 'Print the resolved settings of the chosen profile, each with where it came from (secrets as set or unset)'
complete -c analyst -n "__fish_analyst_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "path" -d 'Print the config file\'s path (whether or not it exists)'
complete -c analyst -n "__fish_analyst_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "profiles" -d 'Print the names of the config file\'s profiles, one per line (what shell completion of --profile offers)'
complete -c analyst -n "__fish_analyst_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "list" -d 'The latest turns, newest first (the default)'
complete -c analyst -n "__fish_analyst_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "show" -d 'One whole turn'
complete -c analyst -n "__fish_analyst_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "export" -d 'A whole thread, question by question'
complete -c analyst -n "__fish_analyst_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "usage" -d 'Turns, tokens, LLM calls, time and cost, grouped'
complete -c analyst -n "__fish_analyst_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "trend" -d 'A suite\'s accuracy over time: a row per recorded check run'
complete -c analyst -n "__fish_analyst_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "forget" -d 'Delete turns and their thread names, erased from the file and its log'
complete -c analyst -n "__fish_analyst_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "push" -d 'Send the spans a collector did not take (kept by ask and check) to the OTLP endpoint, oldest first, each once'
