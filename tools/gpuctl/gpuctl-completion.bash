# bash completion for gpuctl: commands, options, job ids, workloads and
# their parameters. Job ids and workloads come from gpud itself (gpuctl
# status and gpuctl workloads, with the same --socket or --connect).
_gpuctl()
{
	local cur prev words cword
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	local commands="submit status history wait watch result export extend
		cancel pause resume priority workers workloads token check backup help"
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
	--connect|--name|--interval|--count|--timeout|--limit|--values|--format)
		COMPREPLY=(); return ;;
	--check) COMPREPLY=($(compgen -W "sample full" -- "$cur")); return ;;
	--role) COMPREPLY=($(compgen -W "worker viewer admin" -- "$cur")); return ;;
	--state)
		COMPREPLY=($(compgen -W "queued running paused done failed cancelled" -- "$cur"))
		return ;;
	esac
	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--socket --connect --credential --version --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		fi
		return
	fi
	local pos=$((COMP_CWORD - cmdi))
	local jobs
	case $cmd in
	help) [ $pos -eq 1 ] && COMPREPLY=($(compgen -W "$commands" -- "$cur")) ;;
	submit)
		local wl=${COMP_WORDS[cmdi+1]}
		if [ $pos -eq 1 ]; then
			COMPREPLY=($(compgen -W "$(gpuctl "${conn[@]}" workloads 2>/dev/null |
				sed -n 's/^\([a-z0-9_-]*\) (units:.*/\1/p')" -- "$cur"))
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--name --priority --check --file --help
				$(gpuctl "${conn[@]}" submit "$wl" --help 2>/dev/null |
				sed -n 's/^    \(--[a-z0-9_-]*\) .*/\1/p')" -- "$cur"))
		fi ;;
	status|watch|wait|result|export|extend|cancel|pause|resume|priority)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$(gpuctl help "$cmd" 2>/dev/null |
				grep -o -- '--[a-z-]*' | sort -u)" -- "$cur"))
		elif [ $pos -eq 1 ]; then
			jobs=$(gpuctl "${conn[@]}" status --format id --no-header 2>/dev/null)
			COMPREPLY=($(compgen -W "$jobs" -- "$cur"))
		fi ;;
	token) [ $pos -eq 1 ] && COMPREPLY=($(compgen -W "add list revoke" -- "$cur")) ;;
	backup) COMPREPLY=($(compgen -d -- "$cur")) ;;
	*)
		COMPREPLY=($(compgen -W "$(gpuctl help "$cmd" 2>/dev/null |
			grep -o -- '--[a-z-]*' | sort -u)" -- "$cur")) ;;
	esac
}
complete -F _gpuctl gpuctl
