package main

import (
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/capture"
)

func newWireCmd(opts *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "wire",
		Short: "Packet codecs: write sample captures, decode captures",
		Long: `The wire commands expose rocelab's frame codecs (RoCEv2 BTH/RETH/AETH/ImmDt,
CNP, ICRC, 802.1Qbb PFC, 802.3x PAUSE) for users and for debugging.`,
		Example: `  rocelab wire samples -w s.pcap
  rocelab wire decode s.pcap`,
	}
	cmd.AddCommand(newWireSamplesCmd(opts), newWireDecodeCmd(opts))
	return cmd
}

type samplesResult struct {
	File    string   `json:"file"`
	Frames  int      `json:"frames"`
	Samples []string `json:"samples"`
}

func newWireSamplesCmd(opts *options) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "samples [-w FILE.pcap | FILE.pcap]",
		Short: "Write one frame of every packet type the lab emits to a pcap file",
		Long: `Write a pcap capture with one frame of every packet type the lab emits: each
RoCEv2 RC opcode (every AETH syndrome class too), CNP, over IPv4 and IPv6, VLAN
tagged with a PCP, PFC and PAUSE. Open it in Wireshark, or feed it to a tool
under test.

The file is given with -w (as with tcpdump and tshark) or as the argument;
-o stays the global output format (-o json prints the result as JSON).`,
		Example: `  rocelab wire samples -w samples.pcap
  rocelab wire samples samples.pcap && tshark -r samples.pcap`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && file != "" && args[0] != file:
				return badInput(fmt.Errorf("give the file once: -w %s or %s", file, args[0]))
			case len(args) == 1:
				file = args[0]
			case file == "":
				return badInput(errors.New("no output file: rocelab wire samples -w FILE.pcap"))
			}
			samples, err := wire.Samples()
			if err != nil {
				return err
			}
			if err := writeSamples(file); err != nil {
				return err
			}
			res := samplesResult{File: file, Frames: len(samples)}
			for _, s := range samples {
				res.Samples = append(res.Samples, s.Name)
			}
			if opts.wantJSON() {
				return opts.printJSON(res)
			}
			fmt.Fprintf(opts.stdout, "wrote %d frames to %s\n", res.Frames, file)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "write", "w", "", "pcap file to write")
	return cmd
}

func writeSamples(file string) (err error) {
	f, err := os.Create(file)
	if err != nil {
		return badInput(err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := wire.WriteSamplesPcap(f); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}

type decodedFrame struct {
	Frame   int    `json:"frame"`
	Len     int    `json:"len"`
	Kind    string `json:"kind"`
	ICRC    string `json:"icrc"`
	Carried string `json:"icrc_carried,omitempty"`
	Want    string `json:"icrc_computed,omitempty"`
	Summary string `json:"summary,omitempty"`
	Error   string `json:"error,omitempty"`
}

func newWireDecodeCmd(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "decode FILE.pcap",
		Short: "Decode a capture with rocelab's codecs and check every ICRC",
		Long: `Decode each frame of a pcap or pcapng capture (Ethernet) with rocelab's codecs:
print its summary and whether the ICRC of RoCEv2 frames verifies (Wireshark
does not check it). Exits 1 when a frame fails to decode or carries a bad ICRC.`,
		Example: `  rocelab wire samples -w s.pcap
  rocelab wire decode s.pcap`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return badInput(err)
			}
			defer f.Close()
			var frames []decodedFrame
			failed := 0
			err = capture.Read(f, func(d *capture.Decoded) error {
				fr := decodedFrame{Frame: d.Number, Len: d.WireLen, Kind: d.Packet.Kind.String(), ICRC: d.ICRC.String()}
				if d.Err != nil {
					fr.Error = d.Err.Error()
					failed++
				} else {
					fr.Summary = d.Packet.Summary()
				}
				if d.ICRC != capture.ICRCNotApplicable {
					fr.Carried, fr.Want = fmt.Sprintf("%08x", d.CarriedICRC), fmt.Sprintf("%08x", d.ComputedICRC)
				}
				if d.ICRC == capture.ICRCBad {
					fr.ICRC = fmt.Sprintf("bad (carried %s, computed %s)", fr.Carried, fr.Want)
					failed++
				}
				frames = append(frames, fr)
				return nil
			})
			if err != nil {
				return badInput(fmt.Errorf("%s: %w", args[0], err))
			}
			if opts.wantJSON() {
				if frames == nil {
					frames = []decodedFrame{}
				}
				if err := opts.printJSON(frames); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(opts.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "FRAME\tLEN\tKIND\tICRC\tSUMMARY")
				for _, fr := range frames {
					text := fr.Summary
					if fr.Error != "" {
						text = "error: " + fr.Error
					}
					fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\n", fr.Frame, fr.Len, fr.Kind, fr.ICRC, text)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if failed > 0 {
				return fmt.Errorf("%s: %d of %d frames failed to decode or carry a bad ICRC", args[0], failed, len(frames))
			}
			return nil
		},
	}
}
