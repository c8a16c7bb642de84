# bash completion for gpuctl: commands, options, job ids, workloads and
# their parameters. The commands and each one's options come from gpuctl's
# own table (gpuctl help, gpuctl help CMD), so there is no list here; job
# ids and workloads from gpud itself (gpuctl status and gpuctl workloads,
# with the same --socket or --connect).
_gpuctl_commands()
{
	gpuctl help 2>/dev/null | sed -n '/^commands:/,/^options/s/^  \([a-z]*\) .*/\1/p'
}
# The options a command's help page names.
_gpuctl_options()
{
	gpuctl help "$1" 2>/dev/null | grep -o -- '--[a-z-]*' | sort -u
}
# The options its help page lists, one a line (not those in examples).
_gpuctl_listed_options()
{
	gpuctl help "$1" 2>/dev/null |
		sed -n 's/^  \(-[a-z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p'
}
_gpuctl()
{
	local cur prev words cword
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	local -a conn=()
	local i=1 cmd="" cmdi=0
	# Global options before the command; keep them for the calls to gpud.
	while [ $i -lt $COMP_CWORD ]; do
		case ${COMP_WORDS[i]} in
		--socket|--connect|--credential)
			conn+=("${COMP_WORDS[i]}" "${COMP_WORDS[i+1]}"); i=$((i + 2)) ;;
		--socket=*|--connect=*|--credential=*)
			conn+=("${COMP_WORDS[i]}"); i=$((i + 1)) ;;
		-*) i=$((i + 1)) ;;
		*) cmd=${COMP_WORDS[i]}; cmdi=$i; break ;;
		esac
	done
	case $prev in
	--socket|--credential|--file)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--connect|--name|--interval|--count|--timeout|--limit|--values|--format|--since|--until|--user|--time-limit)
		COMPREPLY=(); return ;;
	--check) COMPREPLY=($(compgen -W "sample full" -- "$cur")); return ;;
	--after)
		COMPREPLY=($(compgen -W "$(gpuctl "${conn[@]}" status --format id --no-header 2>/dev/null)" -- "$cur"))
		return ;;
	--role) COMPREPLY=($(compgen -W "worker viewer admin" -- "$cur")); return ;;
	--state)
		# history keeps only finished jobs; status shows every state.
		if [ "$cmd" = history ]; then
			COMPREPLY=($(compgen -W "done failed cancelled" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "queued running paused done failed cancelled" -- "$cur"))
		fi
		return ;;
	esac
	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--socket --connect --credential --version --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_gpuctl_commands)" -- "$cur"))
		fi
		return
	fi
	local pos=$((COMP_CWORD - cmdi))
	local jobs
	case $cmd in
	help) [ $pos -eq 1 ] && COMPREPLY=($(compgen -W "$(_gpuctl_commands)" -- "$cur")) ;;
	submit)
		local wl=${COMP_WORDS[cmdi+1]}
		if [ $pos -eq 1 ]; then
			COMPREPLY=($(compgen -W "$(gpuctl "${conn[@]}" workloads 2>/dev/null |
				sed -n 's/^\([a-z0-9_-]*\) (units:.*/\1/p')" -- "$cur"))
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$(_gpuctl_listed_options submit) --help
				$(gpuctl "${conn[@]}" submit "$wl" --help 2>/dev/null |
				sed -n 's/^    \(--[a-z0-9_-]*\) .*/\1/p')" -- "$cur"))
		fi ;;
	status|watch|wait|result|export|extend|cancel|pause|resume|priority|events|requeue)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$(_gpuctl_options "$cmd")" -- "$cur"))
		elif [ $pos -eq 1 ]; then
			jobs=$(gpuctl "${conn[@]}" status --format id --no-header 2>/dev/null)
			COMPREPLY=($(compgen -W "$jobs" -- "$cur"))
		fi ;;
	token) [ $pos -eq 1 ] && COMPREPLY=($(compgen -W "$(gpuctl help token 2>/dev/null |
		grep -o 'token [a-z]*' | cut -d' ' -f2)" -- "$cur")) ;;
	worker)
		if [ $pos -eq 1 ]; then
			COMPREPLY=($(compgen -W "drain resume forgive" -- "$cur"))
		elif [ $pos -eq 2 ]; then
			# NAME: a row of gpuctl workers (TOKEN@INSTANCE) or its TOKEN.
			COMPREPLY=($(compgen -W "$(gpuctl "${conn[@]}" workers 2>/dev/null |
				awk 'NR > 1 { print $2; print $3 }' | sort -u)" -- "$cur"))
		fi ;;
	backup) COMPREPLY=($(compgen -d -- "$cur")) ;;
	*)
		COMPREPLY=($(compgen -W "$(_gpuctl_options "$cmd")" -- "$cur")) ;;
	esac
}
complete -F _gpuctl gpuctl
