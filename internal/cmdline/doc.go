// Package cmdline holds what the repository's commands (examples/ and
// internal/cmd/) share: how a command builds its flag set, how it ends on
// an error, and how it prints a count. A command's main is one line over a
// run function that tests can call:
//
//	func main() { cmdline.Exit("plan", run(os.Args[1:], os.Stdout, os.Stderr)) }
//
//	func run(args []string, stdout, stderr io.Writer) error {
//		fs := cmdline.FlagSet("plan", stderr)
//		m := fs.String("m", "", "model file")
//		if err := fs.Parse(args); err != nil {
//			return err
//		}
//		…
//	}
package cmdline
