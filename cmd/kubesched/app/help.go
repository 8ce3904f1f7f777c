package app

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	cliflag "k8s.io/component-base/cli/flag"
)

// setRootHelp makes `kubesched --help` read from the top down: what
// kubesched is, its commands (in the order given, then cobra's own, such as
// completion), and only then the scheduler's flags, in kube-scheduler's
// named sections (secure serving, authentication, leader election, ...), as
// cliflag.SetUsageAndHelpFunc prints them for kube-scheduler. The
// subcommands keep cobra's help: their flags are few and all theirs.
func setRootHelp(root *cobra.Command, commands []*cobra.Command, fss cliflag.NamedFlagSets) {
	subcommandHelp := root.HelpFunc() // cobra's default, before ours replaces it
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c != root {
			subcommandHelp(c, args)
			return
		}
		w := c.OutOrStdout()
		fmt.Fprintf(w, "%s\n\nUsage:\n  %s [flags]\n  %s COMMAND [flags]\n\nCommands:\n", c.Long, c.Name(), c.Name())
		listed := map[*cobra.Command]bool{}
		for _, sub := range commands {
			listed[sub] = true
			fmt.Fprintf(w, "  %-11s %s\n", sub.Name(), sub.Short)
		}
		for _, sub := range c.Commands() {
			if !listed[sub] && sub.IsAvailableCommand() {
				fmt.Fprintf(w, "  %-11s %s\n", sub.Name(), sub.Short)
			}
		}
		fmt.Fprintf(w, "\nUse \"%s COMMAND --help\" for a command's own flags.\n", c.Name())
		cliflag.PrintSections(w, withGlobalFlags(c, fss), terminalWidth(w))
	})
}

// withGlobalFlags adds a "global" section: the flags every command takes
// (-v) and --help, which cobra adds when the command runs.
func withGlobalFlags(c *cobra.Command, fss cliflag.NamedFlagSets) cliflag.NamedFlagSets {
	global := pflag.NewFlagSet("global", pflag.ContinueOnError)
	global.AddFlagSet(c.PersistentFlags())
	if h := c.Flags().Lookup("help"); h != nil {
		global.AddFlag(h)
	}
	out := cliflag.NamedFlagSets{FlagSets: map[string]*pflag.FlagSet{}}
	for _, name := range fss.Order {
		out.Order = append(out.Order, name)
		out.FlagSets[name] = fss.FlagSets[name]
	}
	out.Order = append(out.Order, "global")
	out.FlagSets["global"] = global
	return out
}

// terminalWidth is the width to wrap the flags' descriptions at: the
// terminal's, or 0 (no wrapping) when the help goes to a file or a pipe,
// as kube-scheduler does.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}
