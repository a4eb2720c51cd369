
use builtin;
use str;

set edit:completion:arg-completer[analyst] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'analyst'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'analyst'= {
            cand --connect-timeout '--connect-timeout before the command'
            cand --timeout '--timeout before the command'
            cand --idle-timeout '--idle-timeout before the command'
            cand --retries '--retries before the command'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand ask 'Ask the agent a question: the answer, CSV, a chart or JSON'
            cand abort 'Stop a running chat, as the identity that started it'
            cand session 'Mint an embed session for signed embedding, or revoke some'
            cand rows 'Every row of a (truncated) SQL result, from the data query API'
            cand check 'Ask a suite of known questions: smoke checks and evals'
            cand doctor 'Check the setup: what is set, from where, and what answers'
            cand config 'Show the resolved settings, or the config file''s path'
            cand completions 'Print a shell completion script, or the man page'
            cand history 'The local record of past turns: list, show, export, usage'
            cand version 'Print the version, its commit and its target'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'analyst;ask'= {
            cand --chat-id 'Continue this thread (its chat id, printed on stderr as ''chat: <id>'')'
            cand --thread 'Continue the thread named NAME, or start it'
            cand -o 'What to write on stdout'
            cand --output 'What to write on stdout'
            cand --jq 'Filter the JSON output through a jq expression'
            cand --output-file 'Write the output to FILE instead of stdout, atomically'
            cand --replay 'Read a saved stream (''-'' = stdin) instead of calling the service'
            cand --image 'Send an image with the question (repeatable; ''-'' reads one from stdin when the question is an argument): PNG, JPEG, GIF or WebP, at most 20 MiB'
            cand --thread-ttl 'A thread whose last turn is older than this starts afresh'
            cand --resume 'With --chat-id: resume that suspended turn (sends chatId and messageId; no question needed)'
            cand --branch 'Run queries against this development branch (activeBranchName)'
            cand --query 'Which SQL result csv, vega and svg use: ''last'' (the last one that did not fail) or a 1-based index'
            cand --tee 'Also save the raw stream, byte for byte, to FILE'
            cand --vega-config 'For vega, svg, png and html: a Vega config merged into the chart''s (a JSON file, or a theme of vega-themes: dark, excel, fivethirtyeight, ggplot2, googlecharts, latimes, powerbi, quartz, urbaninstitute, vox, carbonwhite, carbong10, carbong90, carbong100)'
            cand --scale 'For -o png: pixels per SVG pixel (1 to 8)'
            cand --expect-answer 'Exit 9 unless the final answer matches this regular expression'
            cand --expect-sql 'Exit 9 unless some SQL query of the agent matches this regular expression'
            cand --expect-tool 'Exit 9 unless the agent called this tool (repeatable; semantic*/cube* names are the same tool)'
            cand --min-rows 'Exit 9 unless the selected SQL result (--query) has at least N rows (totalRows)'
            cand --data-url 'The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api'
            cand --chat-url 'The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)'
            cand --api-key-file 'Read the API key from this file (''-'' = stdin) instead of ANALYST_API_KEY'
            cand --cube-token-file 'Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file (''-'' = stdin) instead of ANALYST_CUBE_TOKEN'
            cand --external-id 'Id of an external user (lowercase, no spaces); created on first use'
            cand --internal-id 'Username of an existing internal user (often an email), whose own permissions apply'
            cand --email 'The user''s email address'
            cand --attr 'A user attribute for row-level security (repeatable; external users only)'
            cand --group 'A group the user belongs to (repeatable; external users only)'
            cand --security-context 'Security context for data queries: a JSON object, or @FILE (external users only)'
            cand --ttl 'Lifetime of an ephemeral external user (e.g. 12h, 7d)'
            cand --timezone 'The IANA time zone the agent''s queries run in (timezone), e.g. Europe/Berlin'
            cand --connect-timeout 'How long to wait for a connection to the service'
            cand --timeout 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124'
            cand --idle-timeout 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124'
            cand --retries 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand --all-rows 'Fetch every row of a truncated result (csv, vega, json)'
            cand --no-history 'Record nothing of this turn in the history (as ANALYST_HISTORY=0)'
            cand --default-branch 'Say that --branch names the default (main/production) branch'
            cand --fail-on-tool-error 'Exit 8 when a tool result carries an error'
            cand --allow-partial 'For csv, vega and json: a truncated result is a warning, not exit 10'
            cand --expect-faithful 'Exit 9 when a figure of the answer is not in the rows'
            cand --allow-questions 'An agent that asks back: its question is the answer, exit 0 (else exit 12)'
            cand --persistent 'Make the external user persistent (isEphemeral: false)'
            cand --no-authoring 'The agent may not create or change saved reports, workbooks or dashboards'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;abort'= {
            cand --chat-id 'The chat to stop (printed by ask on stderr as ''chat: <id>'')'
            cand --external-id 'Id of an external user (lowercase, no spaces); created on first use'
            cand --internal-id 'Username of an existing internal user (often an email), whose own permissions apply'
            cand --timeout 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124'
            cand --chat-url 'The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)'
            cand --api-key-file 'Read the API key from this file (''-'' = stdin) instead of ANALYST_API_KEY'
            cand --cube-token-file 'Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file (''-'' = stdin) instead of ANALYST_CUBE_TOKEN'
            cand --email 'The user''s email address'
            cand --attr 'A user attribute for row-level security (repeatable; external users only)'
            cand --group 'A group the user belongs to (repeatable; external users only)'
            cand --security-context 'Security context for data queries: a JSON object, or @FILE (external users only)'
            cand --ttl 'Lifetime of an ephemeral external user (e.g. 12h, 7d)'
            cand --timezone 'The IANA time zone the agent''s queries run in (timezone), e.g. Europe/Berlin'
            cand --connect-timeout 'How long to wait for a connection to the service'
            cand --idle-timeout 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124'
            cand --retries 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand --persistent 'Make the external user persistent (isEphemeral: false)'
            cand --no-authoring 'The agent may not create or change saved reports, workbooks or dashboards'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;session'= {
            cand -o 'What to write on stdout'
            cand --output 'What to write on stdout'
            cand --base-url 'The account host, e.g. https://acme.cubecloud.dev'
            cand --deployment-id 'The deployment the session is for (deploymentId; the service requires it)'
            cand --external-id 'Id of an external user (lowercase, no spaces); created on first use'
            cand --internal-id 'Username of an existing internal user (often an email), whose own permissions apply'
            cand --jq 'Filter the JSON output through a jq expression'
            cand --output-file 'Write the output to FILE instead of stdout, atomically'
            cand --branch 'The development branch to embed (branchName; production when left out)'
            cand --embed-tenant 'The embed tenant (embedTenantName: lowercase, 5-36 of a-z 0-9 -, starting with a letter)'
            cand --display-name 'The user''s display name (userProfile; external users only)'
            cand --picture 'The user''s picture, an absolute http(s) URL (userProfile; external users only)'
            cand --setting 'A switch of the embedded app (settings; repeatable), e.g. allowAi=false, locale=de-DE'
            cand --api-key-file 'Read the API key from this file (''-'' = stdin) instead of ANALYST_API_KEY'
            cand --email 'The user''s email address'
            cand --attr 'A user attribute for row-level security (repeatable; external users only)'
            cand --group 'A group the user belongs to (repeatable; external users only)'
            cand --security-context 'Security context for data queries: a JSON object, or @FILE (external users only)'
            cand --ttl 'Lifetime of an ephemeral external user (e.g. 12h, 7d)'
            cand --timezone 'The IANA time zone the agent''s queries run in (timezone), e.g. Europe/Berlin'
            cand --connect-timeout 'How long to wait for a connection to the service'
            cand --timeout 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124'
            cand --idle-timeout 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124'
            cand --retries 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand --creator-mode 'Let the user create content (creatorMode: true)'
            cand --persistent 'Make the external user persistent (isEphemeral: false)'
            cand --no-authoring 'The agent may not create or change saved reports, workbooks or dashboards'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand revoke 'End embed sessions (idempotent)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'analyst;session;revoke'= {
            cand --base-url 'The account host, e.g. https://acme.cubecloud.dev'
            cand --api-key-file 'Read the API key from this file (''-'' = stdin) instead of ANALYST_API_KEY'
            cand --connect-timeout 'How long to wait for a connection to the service'
            cand --timeout 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124'
            cand --idle-timeout 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124'
            cand --retries 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;session;help'= {
            cand revoke 'End embed sessions (idempotent)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'analyst;session;help;revoke'= {
        }
        &'analyst;session;help;help'= {
        }
        &'analyst;rows'= {
            cand --sql 'The SQL to run'
            cand --sql-file 'Read the SQL from FILE (''-'' = stdin)'
            cand --from 'A stream saved by ''ask -o raw'' or ''ask -o events'' (''-'' = stdin; the default when stdin is a pipe)'
            cand --query 'Which SQL result of the saved stream: ''last'' (the last that did not fail) or a 1-based index'
            cand -o 'What to write on stdout'
            cand --output 'What to write on stdout'
            cand --output-file 'Write the output to FILE instead of stdout, atomically'
            cand --data-url 'The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api'
            cand --jq 'Filter the JSON output through a jq expression'
            cand --page-size 'Page through the result N rows at a time with LIMIT/OFFSET (on a line of their own, past a trailing -- comment) until a short page (the server''s cap is 50,000; SQL with its own larger LIMIT is paged up to it); a page that repeats the one before, or more rows than totalRows, is exit 7'
            cand --order-by 'Add ORDER BY COL before paging (pages of an unordered query can overlap or skip rows)'
            cand --security-context 'With ANALYST_DATA_SECRET: the signed token''s payload, a JSON object or @FILE'
            cand --timezone 'Time zone for the query (passed to the data query API)'
            cand --cache 'Cache mode (passed to the data query API)'
            cand --connect-timeout 'How long to wait for a connection to the service'
            cand --timeout 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124'
            cand --idle-timeout 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124'
            cand --retries 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand --allow-partial 'Fewer rows than totalRows is a warning, not exit 10'
            cand --always 'Run the query even when the saved result is already complete'
            cand --no-paging 'Send the SQL as it is, in one request (an answer of exactly 50,000 rows is then exit 10)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;check'= {
            cand -j 'How many cases run at once'
            cand --jobs 'How many cases run at once'
            cand --repeat 'Ask every case N times (fresh threads)'
            cand --filter 'Run only the cases whose name matches REGEX'
            cand --junit 'Write a JUnit XML report to FILE'
            cand -o 'The report on stdout'
            cand --output 'The report on stdout'
            cand --baseline 'Compare with an earlier -o json REPORT: regressions or noise'
            cand --min-accuracy 'The run passes when this share of its cases pass (0.9 or 90%)'
            cand --pass-rate 'A case passes when at least this share of its runs pass (0 to 1), overriding the suite''s pass_rate'
            cand --max-seconds 'Fail a turn that takes more than SECONDS, overriding the suite''s max_seconds'
            cand --max-tokens 'Fail a turn whose __usage__ reports more than N totalTokens, overriding the suite''s max_tokens'
            cand --max-llm-calls 'Fail a turn whose __usage__ reports more than N llmCalls, overriding the suite''s max_llm_calls'
            cand --retry-errors 'Ask again, of an earlier -o json REPORT of this suite, only the runs that ended in an error outside the agent''s answer (the service failing or unreachable, a reset, a case''s timeout, an agent crash); every other run keeps its verdict, and the report written is the merged one, each run asked again keeping the attempts it replaced. A report of another agent or another suite is refused (exit 2); a case changed since the report is asked again whole'
            cand --shard 'Run the K-th of N disjoint slices of the cases: sorted by name and dealt round-robin, so no shard has more than one case more than another, and the N shards together run every case once (for a CI matrix)'
            cand --save 'Keep each turn''s raw stream in DIR, and what a re-grade needs (replay one with ''ask --replay'', grade them again with --regrade DIR)'
            cand --regrade 'Grade again the streams a run saved with --save DIR, against the suite as it is now, asking no turn'
            cand --budget-tokens 'Start no new turn once the finished turns'' totalTokens reach N (turns in flight finish)'
            cand --budget-usd 'Start no new turn once the finished turns'' cost at the config file''s [prices] reaches X US dollars'
            cand --summary 'Append a Markdown summary to FILE (made for $GITHUB_STEP_SUMMARY): the accuracy, a table of the cases that did not pass, every case in a collapsed block'
            cand --jq 'Filter the JSON output through a jq expression'
            cand --output-file 'Write the output to FILE instead of stdout, atomically'
            cand --baseline-max-age 'A baseline older than this is unreliable: it gates nothing (default 14d; e.g. 36h)'
            cand --chat-url 'The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)'
            cand --api-key-file 'Read the API key from this file (''-'' = stdin) instead of ANALYST_API_KEY'
            cand --cube-token-file 'Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file (''-'' = stdin) instead of ANALYST_CUBE_TOKEN'
            cand --data-url 'The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api'
            cand --external-id 'Id of an external user (lowercase, no spaces); created on first use'
            cand --internal-id 'Username of an existing internal user (often an email), whose own permissions apply'
            cand --email 'The user''s email address'
            cand --attr 'A user attribute for row-level security (repeatable; external users only)'
            cand --group 'A group the user belongs to (repeatable; external users only)'
            cand --security-context 'Security context for data queries: a JSON object, or @FILE (external users only)'
            cand --ttl 'Lifetime of an ephemeral external user (e.g. 12h, 7d)'
            cand --timezone 'The IANA time zone the agent''s queries run in (timezone), e.g. Europe/Berlin'
            cand --connect-timeout 'How long to wait for a connection to the service'
            cand --timeout 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124'
            cand --idle-timeout 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124'
            cand --retries 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand --list 'Print the cases the run would ask, and ask nothing'
            cand --expect-faithful 'Fail a case whose answer states a figure its rows do not hold (every case, as expect_faithful does)'
            cand --certified 'With Cube''s eval files: also ask every certified query''s user_request, graded against its SQL (cases certified/NAME)'
            cand --no-history 'Record nothing of these turns in the history (as ANALYST_HISTORY=0)'
            cand --stop-when-decided 'End a case''s repeats once its verdict at its pass rate cannot change (--repeat 5 --pass-rate 0.6: three passes or three failures decide it); the report says how many runs that saved'
            cand --tap 'Print TAP (Test Anything Protocol) on stdout'
            cand --fail-on-regression 'Exit 9 when --baseline finds a regression (p < 0.05, a case or the suite), never on noise; an unreliable baseline gates nothing'
            cand --baseline-any 'Trust the baseline whatever its age, chat URL, branch or suite'
            cand --persistent 'Make the external user persistent (isEphemeral: false)'
            cand --no-authoring 'The agent may not create or change saved reports, workbooks or dashboards'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand merge 'Merge shards'' -o json reports into one, or render one report again'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'analyst;check;merge'= {
            cand --junit 'Write a JUnit XML report to FILE'
            cand -o 'The report on stdout'
            cand --output 'The report on stdout'
            cand --summary 'Append a Markdown summary to FILE (made for $GITHUB_STEP_SUMMARY): the accuracy, a table of the cases that did not pass, every case in a collapsed block'
            cand --baseline 'Compare with an earlier -o json REPORT: regressions or noise'
            cand --jq 'Filter the JSON output through a jq expression'
            cand --output-file 'Write the output to FILE instead of stdout, atomically'
            cand --baseline-max-age 'A baseline older than this is unreliable: it gates nothing (default 14d; e.g. 36h)'
            cand --min-accuracy 'The run passes when this share of its cases pass (0.9 or 90%)'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand --tap 'Print TAP (Test Anything Protocol) on stdout'
            cand --fail-on-regression 'Exit 9 when --baseline finds a regression (p < 0.05, a case or the suite), never on noise; an unreliable baseline gates nothing'
            cand --baseline-any 'Trust the baseline whatever its age, chat URL, branch or suite'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;check;help'= {
            cand merge 'Merge shards'' -o json reports into one, or render one report again'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'analyst;check;help;merge'= {
        }
        &'analyst;check;help;help'= {
        }
        &'analyst;doctor'= {
            cand -o 'table (for a person, fitted to the terminal) or json (an array of findings)'
            cand --output 'table (for a person, fitted to the terminal) or json (an array of findings)'
            cand --chat-url 'The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)'
            cand --api-key-file 'Read the API key from this file (''-'' = stdin) instead of ANALYST_API_KEY'
            cand --cube-token-file 'Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file (''-'' = stdin) instead of ANALYST_CUBE_TOKEN'
            cand --data-url 'The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api'
            cand --base-url 'The account host, for session (e.g. https://acme.cubecloud.dev)'
            cand --external-id 'Id of an external user (lowercase, no spaces); created on first use'
            cand --internal-id 'Username of an existing internal user (often an email), whose own permissions apply'
            cand --email 'The user''s email address'
            cand --attr 'A user attribute for row-level security (repeatable; external users only)'
            cand --group 'A group the user belongs to (repeatable; external users only)'
            cand --security-context 'Security context for data queries: a JSON object, or @FILE (external users only)'
            cand --ttl 'Lifetime of an ephemeral external user (e.g. 12h, 7d)'
            cand --timezone 'The IANA time zone the agent''s queries run in (timezone), e.g. Europe/Berlin'
            cand --connect-timeout 'How long to wait for a connection to the service'
            cand --timeout 'Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124'
            cand --idle-timeout 'A stream that sends nothing for this long is stalled: the chat is aborted, exit 124'
            cand --retries 'How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand --offline 'Check the settings only: call no endpoint'
            cand --persistent 'Make the external user persistent (isEphemeral: false)'
            cand --no-authoring 'The agent may not create or change saved reports, workbooks or dashboards'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;config'= {
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand list 'Print the resolved settings of the chosen profile, each with where it came from (secrets as set or unset)'
            cand path 'Print the config file''s path (whether or not it exists)'
            cand profiles 'Print the names of the config file''s profiles, one per line (what shell completion of --profile offers)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'analyst;config;list'= {
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;config;path'= {
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;config;profiles'= {
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;config;help'= {
            cand list 'Print the resolved settings of the chosen profile, each with where it came from (secrets as set or unset)'
            cand path 'Print the config file''s path (whether or not it exists)'
            cand profiles 'Print the names of the config file''s profiles, one per line (what shell completion of --profile offers)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'analyst;config;help;list'= {
        }
        &'analyst;config;help;path'= {
        }
        &'analyst;config;help;profiles'= {
        }
        &'analyst;config;help;help'= {
        }
        &'analyst;completions'= {
            cand --dir 'With man: write every page (analyst.1, analyst-ask.1, …) into DIR instead of printing analyst(1)'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;history'= {
            cand --limit 'At most N turns'
            cand --thread 'Only the turns of this thread (ask --thread NAME)'
            cand --since 'Only turns since DURATION ago (7d, 12h) or DATE (2026-11-01)'
            cand --grep 'Only turns whose question or answer matches REGEX'
            cand -o 'table (for a person) or json (an array)'
            cand --output 'table (for a person) or json (an array)'
            cand --jq 'Filter the JSON output through a jq expression'
            cand --status 'Only turns of this status (completed, incomplete, cut, error, …)'
            cand --kind 'Only turns asked by this command: ask or check'
            cand --output-file 'Write the output to FILE instead of stdout, atomically'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand list 'The latest turns, newest first (the default)'
            cand show 'One whole turn'
            cand export 'A whole thread, question by question'
            cand usage 'Turns, tokens, LLM calls, time and cost, grouped'
            cand trend 'A suite''s accuracy over time: a row per recorded check run'
            cand forget 'Delete turns and their thread names, erased from the file and its log'
            cand push 'Send the spans a collector did not take (kept by ask and check) to the OTLP endpoint, oldest first, each once'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'analyst;history;list'= {
            cand --limit 'At most N turns'
            cand --thread 'Only the turns of this thread (ask --thread NAME)'
            cand --since 'Only turns since DURATION ago (7d, 12h) or DATE (2026-11-01)'
            cand --status 'Only turns of this status (completed, incomplete, cut, error, …)'
            cand --kind 'Only turns asked by this command: ask or check'
            cand --grep 'Only turns whose question or answer matches REGEX'
            cand -o 'table (for a person) or json (an array)'
            cand --output 'table (for a person) or json (an array)'
            cand --jq 'Filter the JSON output through a jq expression'
            cand --output-file 'Write the output to FILE instead of stdout, atomically'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;history;show'= {
            cand -o 'table (for a person) or json'
            cand --output 'table (for a person) or json'
            cand --jq 'Filter the JSON output through a jq expression'
            cand --output-file 'Write the output to FILE instead of stdout, atomically'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;history;export'= {
            cand -o 'markdown, html (one inert page, as ask -o html) or json'
            cand --output 'markdown, html (one inert page, as ask -o html) or json'
            cand --jq 'Filter the JSON output through a jq expression'
            cand --output-file 'Write the output to FILE instead of stdout, atomically'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;history;usage'= {
            cand --by 'How turns are grouped'
            cand --since 'Only turns since DURATION ago (30d) or DATE (2026-11-01)'
            cand -o 'table (for a person), json or csv'
            cand --output 'table (for a person), json or csv'
            cand --jq 'Filter the JSON output through a jq expression'
            cand --output-file 'Write the output to FILE instead of stdout, atomically'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;history;trend'= {
            cand --since 'Only runs since DURATION ago (30d) or DATE (2026-11-01)'
            cand --last 'Only the latest N runs'
            cand -o 'table (for a person; the default on a terminal), csv (the default otherwise), json (an array), or svg (a line chart of accuracy over time, drawn offline as ask -o svg draws)'
            cand --output 'table (for a person; the default on a terminal), csv (the default otherwise), json (an array), or svg (a line chart of accuracy over time, drawn offline as ask -o svg draws)'
            cand --jq 'Filter the JSON output through a jq expression'
            cand --output-file 'Write the output to FILE instead of stdout, atomically'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;history;forget'= {
            cand --before 'Delete the turns before DATE (2026-01-01) or DURATION ago (90d)'
            cand --thread 'Delete a thread''s turns and its name'
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand --all 'Delete every turn and thread name'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;history;push'= {
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;history;help'= {
            cand list 'The latest turns, newest first (the default)'
            cand show 'One whole turn'
            cand export 'A whole thread, question by question'
            cand usage 'Turns, tokens, LLM calls, time and cost, grouped'
            cand trend 'A suite''s accuracy over time: a row per recorded check run'
            cand forget 'Delete turns and their thread names, erased from the file and its log'
            cand push 'Send the spans a collector did not take (kept by ask and check) to the OTLP endpoint, oldest first, each once'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'analyst;history;help;list'= {
        }
        &'analyst;history;help;show'= {
        }
        &'analyst;history;help;export'= {
        }
        &'analyst;history;help;usage'= {
        }
        &'analyst;history;help;trend'= {
        }
        &'analyst;history;help;forget'= {
        }
        &'analyst;history;help;push'= {
        }
        &'analyst;history;help;help'= {
        }
        &'analyst;version'= {
            cand --color 'Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never'
            cand --profile 'Use this profile of the config file (analyst config path prints where it is)'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand --verbose 'Log each HTTP request and response status to stderr (the key is always redacted)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'analyst;help'= {
            cand ask 'Ask the agent a question: the answer, CSV, a chart or JSON'
            cand abort 'Stop a running chat, as the identity that started it'
            cand session 'Mint an embed session for signed embedding, or revoke some'
            cand rows 'Every row of a (truncated) SQL result, from the data query API'
            cand check 'Ask a suite of known questions: smoke checks and evals'
            cand doctor 'Check the setup: what is set, from where, and what answers'
            cand config 'Show the resolved settings, or the config file''s path'
            cand completions 'Print a shell completion script, or the man page'
            cand history 'The local record of past turns: list, show, export, usage'
            cand version 'Print the version, its commit and its target'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'analyst;help;ask'= {
        }
        &'analyst;help;abort'= {
        }
        &'analyst;help;session'= {
            cand revoke 'End embed sessions (idempotent)'
        }
        &'analyst;help;session;revoke'= {
        }
        &'analyst;help;rows'= {
        }
        &'analyst;help;check'= {
            cand merge 'Merge shards'' -o json reports into one, or render one report again'
        }
        &'analyst;help;check;merge'= {
        }
        &'analyst;help;doctor'= {
        }
        &'analyst;help;config'= {
            cand list 'Print the resolved settings of the chosen profile, each with where it came from (secrets as set or unset)'
            cand path 'Print the config file''s path (whether or not it exists)'
            cand profiles 'Print the names of the config file''s profiles, one per line (what shell completion of --profile offers)'
        }
        &'analyst;help;config;list'= {
        }
        &'analyst;help;config;path'= {
        }
        &'analyst;help;config;profiles'= {
        }
        &'analyst;help;completions'= {
        }
        &'analyst;help;history'= {
            cand list 'The latest turns, newest first (the default)'
            cand show 'One whole turn'
            cand export 'A whole thread, question by question'
            cand usage 'Turns, tokens, LLM calls, time and cost, grouped'
            cand trend 'A suite''s accuracy over time: a row per recorded check run'
            cand forget 'Delete turns and their thread names, erased from the file and its log'
            cand push 'Send the spans a collector did not take (kept by ask and check) to the OTLP endpoint, oldest first, each once'
        }
        &'analyst;help;history;list'= {
        }
        &'analyst;help;history;show'= {
        }
        &'analyst;help;history;export'= {
        }
        &'analyst;help;history;usage'= {
        }
        &'analyst;help;history;trend'= {
        }
        &'analyst;help;history;forget'= {
        }
        &'analyst;help;history;push'= {
        }
        &'analyst;help;version'= {
        }
        &'analyst;help;help'= {
        }
    ]
    $completions[$command]
}
