package cli

import (
	"context"
	"fmt"
	"strings"
)

// subcommandTables lists the verbs that have subcommands, for completion.
// A new verb with subcommands adds its table here.
var subcommandTables = map[string]func() []subcommand{
	"run": runSubcommands, "definition": definitionSubcommands, "approval": approvalSubcommands,
	"case": caseSubcommands, "tenant": tenantSubcommands, "apikey": apikeySubcommands,
	"completion": completionSubcommands, "member": memberSubcommands,
	"schedule": scheduleSubcommands, "webhook": webhookSubcommands, "subscription": subscriptionSubcommands,
	"node": func() []subcommand { return []subcommand{{name: "cancel"}} },
}

func completionSubcommands() []subcommand {
	return []subcommand{{name: "bash"}, {name: "zsh"}, {name: "fish"}}
}

// runCompletion prints a completion script for the shell:
//
//	source <(ductor completion bash)
//	ductor completion zsh > "${fpath[1]}/_ductor"
//	ductor completion fish > ~/.config/fish/completions/ductor.fish
func runCompletion(_ context.Context, env Env, args []string) error {
	if len(args) > 0 && isHelp(args[len(args)-1]) {
		fmt.Fprintln(env.Stdout, "Usage: ductor completion bash|zsh|fish\n\n"+
			"  source <(ductor completion bash)\n"+
			"  ductor completion zsh > \"${fpath[1]}/_ductor\"\n"+
			"  ductor completion fish > ~/.config/fish/completions/ductor.fish")
		return nil
	}
	if len(args) != 1 {
		return want("ductor completion bash|zsh|fish")
	}
	switch args[0] {
	case "bash":
		fmt.Fprint(env.Stdout, bashCompletion())
	case "zsh":
		fmt.Fprint(env.Stdout, "#compdef ductor\nautoload -U +X bashcompinit && bashcompinit\n"+bashCompletion())
	case "fish":
		fmt.Fprint(env.Stdout, fishCompletion())
	default:
		return usagef("unknown shell %q: want bash, zsh or fish", args[0])
	}
	return nil
}

func topNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

func subNamesOf(verb string) []string {
	table, ok := subcommandTables[verb]
	if !ok {
		return nil
	}
	var names []string
	for _, s := range table() {
		names = append(names, s.name)
	}
	return names
}

func bashCompletion() string {
	var b strings.Builder
	b.WriteString("# bash completion for ductor\n_ductor() {\n  local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n")
	fmt.Fprintf(&b, "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n    COMPREPLY=($(compgen -W %q -- \"$cur\"))\n    return\n  fi\n", strings.Join(topNames(), " "))
	b.WriteString("  case \"${COMP_WORDS[1]}\" in\n")
	for _, verb := range topNames() {
		subs := subNamesOf(verb)
		if len(subs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "    %s)\n      if [ \"$COMP_CWORD\" -eq 2 ]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi ;;\n", verb, strings.Join(subs, " "))
	}
	b.WriteString("  esac\n  COMPREPLY=($(compgen -f -- \"$cur\"))\n}\ncomplete -o filenames -F _ductor ductor\n")
	return b.String()
}

func fishCompletion() string {
	var b strings.Builder
	b.WriteString("# fish completion for ductor\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "complete -c ductor -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.usage))
		for _, s := range subNamesOf(c.name) {
			fmt.Fprintf(&b, "complete -c ductor -n '__fish_seen_subcommand_from %s' -a %s\n", c.name, s)
		}
	}
	return b.String()
}

// fishQuote quotes s for fish, where double quotes expand variables.
func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
