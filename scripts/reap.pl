#!/usr/bin/perl
# reap.pl [--deadline SECONDS] [--name NAME] COMMAND [ARGS...]
#
# Runs COMMAND as a child subreaper (prctl PR_SET_CHILD_SUBREAPER): every
# process it starts stays below this one, even one that double-forks and
# calls setsid (containerd's shims, a warm service, a watchdog's sleep).
# Orphans are reaped as they end, as pid 1 would, so a test that waits for
# a process to be gone sees it gone.  When COMMAND ends, whatever it left
# running is killed (and named on stderr), so nothing it left can hold the
# caller's output open: prove reads a test's output to EOF, and CI reads
# ours.  Past the deadline COMMAND itself and everything below it are
# killed and we exit 124 with one line saying so.
#
# Why perl: .ci/run needs this before anything is installed or built, and
# perl-base is in every Debian (prove, which runs the tests, is perl too).
# Exit status: COMMAND's (128+N for a signal), 124 past the deadline, 125
# when COMMAND could not be started.
use strict;
use warnings;
use POSIX qw(:sys_wait_h WNOHANG);

my $deadline = 0;
my $name;
while (@ARGV && $ARGV[0] =~ /^--/) {
	my $opt = shift @ARGV;
	if ($opt eq '--deadline') { $deadline = shift(@ARGV) // '' }
	elsif ($opt eq '--name') { $name = shift @ARGV }
	elsif ($opt eq '--') { last }
	else { print STDERR "reap: unknown option $opt\n"; exit 125 }
}
if (!@ARGV || $deadline !~ /^\d+$/) {
	print STDERR "usage: reap.pl [--deadline SECONDS] [--name NAME] COMMAND [ARGS...]\n";
	exit 125;
}
$name //= $ARGV[0];

# prctl(PR_SET_CHILD_SUBREAPER = 36, 1): the syscall's number by machine.
my %prctl_nr = (x86_64 => 157, aarch64 => 167, riscv64 => 167, i686 => 172,
	i386 => 172, armv7l => 172, ppc64le => 171, s390x => 172);
my $arch = (POSIX::uname())[4];
my $nr = $prctl_nr{$arch};
if (!defined $nr || syscall($nr, 36, 1, 0, 0, 0) != 0) {
	# Without it orphans go to pid 1 and are not ours to end; COMMAND still
	# runs, with the deadline, and what is below it is still ended.
	print STDERR "reap: no child subreaper here ($arch): $!\n";
}

my $child = fork();
if (!defined $child) { print STDERR "reap: fork: $!\n"; exit 125 }
if ($child == 0) {
	{ no warnings 'exec'; exec { $ARGV[0] } @ARGV; }
	print STDERR "reap: cannot run $ARGV[0]: $!\n";
	POSIX::_exit(125);
}

# The processes below us: a walk of /proc's parent links from our pid.
sub descendants {
	my %kids;
	opendir(my $d, '/proc') or return ();
	for my $p (grep { /^\d+$/ } readdir $d) {
		open(my $f, '<', "/proc/$p/stat") or next;
		my $stat = <$f> // next;
		close $f;
		# pid (comm) state ppid ...: comm may hold spaces and parentheses.
		next unless $stat =~ /\) (\S) (\d+) /;
		push @{ $kids{$2} }, [ $p, $1 ];
	}
	closedir $d;
	my (@out, @todo);
	@todo = ($$);
	while (defined(my $p = shift @todo)) {
		for my $k (@{ $kids{$p} || [] }) {
			push @out, $k->[0] unless $k->[1] eq 'Z';
			push @todo, $k->[0];
		}
	}
	return @out;
}

sub comm_of {
	my ($p) = @_;
	open(my $f, '<', "/proc/$p/comm") or return '?';
	my $c = <$f> // '?';
	chomp $c;
	return $c;
}

# End everything below us: SIGKILL, reap, look again (a process may fork
# while we walk).  Returns the names of what was found the first time.
sub end_all {
	my @names;
	for my $round (1 .. 50) {
		my @left = descendants();
		last unless @left;
		push @names, map { "$_ " . comm_of($_) } @left if $round == 1;
		kill 'KILL', @left;
		1 while waitpid(-1, WNOHANG) > 0;
		select(undef, undef, undef, 0.02);
	}
	1 while waitpid(-1, WNOHANG) > 0;
	return @names;
}

# Wait for COMMAND, reaping every orphan handed to us on the way.
my $status;
my $end = $deadline ? time() + $deadline : 0;
while (!defined $status) {
	my $w = waitpid(-1, WNOHANG);
	if ($w == $child) { $status = $?; last }
	next if $w > 0;
	if ($end && time() >= $end) {
		my @names = end_all();
		print STDERR "reap: $name still running after $deadline s: ended with what it started"
			. (@names ? " (" . join(', ', @names[0 .. ($#names < 9 ? $#names : 9)]) . ")" : '') . "\n";
		print "not ok - reap: $name still running after $deadline s, ended\n";
		exit 124;
	}
	# No SIGCHLD wait in core perl without a handler race; 20 ms polls are
	# far below what any test's own waits allow for.
	select(undef, undef, undef, 0.02);
}

my @names = end_all();
if (@names) {
	my $n = @names;
	print STDERR "reap: $name left $n process" . ($n == 1 ? '' : 'es') . " running, ended: "
		. join(', ', @names[0 .. ($#names < 9 ? $#names : 9)]) . ($n > 10 ? ', ...' : '') . "\n";
}
exit(WIFEXITED($status) ? WEXITSTATUS($status) : 128 + WTERMSIG($status));
